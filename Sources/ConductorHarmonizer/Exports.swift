@_exported public import ConductorCore
