import CCrypto

/// OpenSSL set up to stay usable until the process is gone. By default it tears itself down in an atexit handler,
/// while threads of connection pools (libcurl's, closing SSH sessions and TLS connections) may still be using it: the
/// process then crashes on its way out. Only OpenSSL's first initialization decides, so a program calls this first.
public enum OpenSSLLifetime {
    private static let initialized: Bool = llvs_openssl_init_without_exit_cleanup() == 1

    /// Initializes OpenSSL without its exit-time teardown (once; later calls do nothing).
    public static func keepUntilProcessEnds() { _ = initialized }
}
