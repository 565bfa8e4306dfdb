import CofferCLI
import Glibc

exit(CommandLineTool.main(CommandLine.arguments))
