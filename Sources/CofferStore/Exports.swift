/// The layers below the library, re-exported: `import Coffer` is all an embedder writes.
@_exported import CofferCrypto
@_exported import CofferFormat
@_exported import CofferSupport
@_exported import CofferSystem
