import Coffer
import CofferCLI
import Glibc

ProcessHardening.apply()
exit(DockerCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), io: .process()))
