/// The model the bytes carry, re-exported: whoever reads or writes a file has its values.
@_exported import CofferModel
