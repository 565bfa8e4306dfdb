import CofferProvider
import CofferCredentialHelpers

ProcessHardening.apply()
CurrentProcess.exit(GitCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), io: .process()))
