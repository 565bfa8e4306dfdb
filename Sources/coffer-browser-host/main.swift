// Coffer's native-messaging host for the browser extension (SPEC.md §13). Started by the
// browser, one process per connection; everything happens in CofferBrowserHost.
import CofferBrowserHost
import CofferSystem

CurrentProcess.exit(BrowserHostMain.run(CommandLine.arguments))
