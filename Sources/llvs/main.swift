import LLVSCommandLine

/// `llvs`: the command-line tool, with every kind of remote this package ships.
await LLVSTool(connectors: .standard).main()
