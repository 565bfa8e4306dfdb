import CofferCLI
import CofferSystem

CurrentProcess.exit(CommandLineTool.main(CommandLine.arguments))
