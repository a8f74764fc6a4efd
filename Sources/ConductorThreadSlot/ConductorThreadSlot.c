#include "ConductorThreadSlot.h"

_Thread_local void *_Nullable conductor_harmonizer_lookup_cache = 0;
