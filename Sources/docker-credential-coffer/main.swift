import CofferProvider
import CofferCredentialHelpers
import Glibc

ProcessHardening.apply()
exit(DockerCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), io: .process()))
