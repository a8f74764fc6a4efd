@_exported public import ConductorGraph
