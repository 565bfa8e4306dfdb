import CofferProvider
import CofferCredentialHelpers
import Glibc

ProcessHardening.apply()
exit(GitCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), io: .process()))
