// Everything in one import: each area is a module of its own (docs/targets.txt draws the
// arrows between them), and an app that wants all of them imports this one.
@_exported public import ConductorAssembly
@_exported public import ConductorGate
@_exported public import ConductorGraph
@_exported public import ConductorHarmonizer
@_exported public import ConductorLaunch
@_exported public import ConductorReports
