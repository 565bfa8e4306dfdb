// `import Coffer`: the whole library for an embedder, one import — every layer's public API,
// re-exported. Coffer's own targets import the layers they stand on instead, so that the
// compiler holds the arrows (README, "What is where"; scripts/check-layers).
@_exported import CofferAudit
@_exported import CofferProvider
@_exported import CofferStore
@_exported import CofferTeams
@_exported import CofferFillAgent
@_exported import CofferHostKit
@_exported import CofferInterchange
@_exported import CofferMaintenance
@_exported import CofferSSHAgent
