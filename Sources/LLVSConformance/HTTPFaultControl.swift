import Foundation
import LLVS
import LLVSHTTP

/// The conformance suite's failure checks, run against any remote: for a remote reached over HTTP the faults are
/// injected into its client's requests (`HTTPFaultInjector`), between the connector and the network; for a local
/// folder, into its file operations (`FaultInjectingFileSystem`).
public struct HTTPFaultControl: FaultControl {
    public let injector: HTTPFaultInjector
    /// Whether the remote signs in with OAuth, whose tokens expire and are renewed; a password or no sign-in does not
    /// expire, so there is nothing for the expired-token check to check.
    public let renewsCredentials: Bool

    public init(injector: HTTPFaultInjector, renewsCredentials: Bool) {
        self.injector = injector
        self.renewsCredentials = renewsCredentials
    }

    public var supportedFaults: Set<InjectedFault> {
        renewsCredentials ? Set(InjectedFault.allCases) : Set(InjectedFault.allCases).subtracting([.expiredToken])
    }

    public func unsupportedReason(_ fault: InjectedFault) -> String {
        fault == .expiredToken
            ? "the remote's credentials do not expire (a password, no sign-in, or tokens that live until revoked)"
            : "this remote cannot inject \(fault.rawValue)"
    }

    public var clientWaits: HTTPWaitRecord? { injector.waits }

    public func injectOnce(_ fault: InjectedFault) async { inject(fault, on: .anyRequest) }

    public func injectOnChange(_ fault: InjectedFault) async { inject(fault, on: .change) }

    public var pendingFaults: Int? { get async { injector.pendingCount } }

    private func inject(_ fault: InjectedFault, on target: HTTPFaultInjector.Target) {
        switch fault {
        case .rateLimited: injector.injectOnce(.rateLimited, on: target)
        case .serviceUnavailable: injector.injectOnce(.serviceUnavailable, on: target)
        case .droppedConnection: injector.injectOnce(.droppedAfterServerActed, on: target)
        case .droppedMidUpload: injector.injectOnce(.droppedMidBody, on: target)
        case .expiredToken: injector.injectOnce(.unauthorized, on: target)
        case .revokedToken: injector.injectOnce(.revoked, on: target)
        }
    }
}
