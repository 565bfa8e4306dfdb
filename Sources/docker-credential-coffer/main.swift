import CofferProvider
import CofferCredentialHelpers

ProcessHardening.apply()
CurrentProcess.exit(DockerCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), io: .process()))
