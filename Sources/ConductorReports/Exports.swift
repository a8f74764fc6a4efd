@_exported public import ConductorLaunch
