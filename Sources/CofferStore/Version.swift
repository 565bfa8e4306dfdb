import CofferFormat
public let cofferVersion = "0.1.0"
