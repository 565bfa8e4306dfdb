/// The store beneath the provider, and the teams on it, re-exported: a host imports the
/// provider and has all three.
@_exported import CofferStore
@_exported import CofferTeams
