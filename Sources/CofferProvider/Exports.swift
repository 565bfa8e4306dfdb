/// The store beneath the provider, re-exported: a host imports the provider and has both.
@_exported import CofferStore
