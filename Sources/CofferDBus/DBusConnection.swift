import CDBus

/// Why a bus operation failed: the D-Bus error's name and message.
public struct DBusError: Error, CustomStringConvertible, Sendable {
    public let name: String
    public let message: String
    public var description: String { message.isEmpty ? name : "\(message) (\(name))" }

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }
}

/// A private connection to the session bus (or the system bus, for polkit) (libdbus's `DBusConnection`): the Secret Service
/// provider's, or a client's (the import). One thread uses it.
public final class DBusConnection {
    let pointer: OpaquePointer

    /// Connects to `$DBUS_SESSION_BUS_ADDRESS`.
    /// - Throws: `DBusError` when there is no session bus (`org.freedesktop.DBus.Error.*`).
    public static func session() throws(DBusError) -> DBusConnection {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error) else { throw Self.take(&error) }
        dbus_connection_set_exit_on_disconnect(connection, 0)  // a lost bus ends the loop, not the process
        return DBusConnection(pointer: connection)
    }

    /// Connects to the system bus (`$DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket): polkit's.
    public static func system() throws(DBusError) -> DBusConnection {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else { throw Self.take(&error) }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        return DBusConnection(pointer: connection)
    }

    private init(pointer: OpaquePointer) { self.pointer = pointer }

    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    /// Our unique name on the bus (`:1.42`).
    public var uniqueName: String { dbus_bus_get_unique_name(pointer).map { String(cString: $0) } ?? "" }

    public enum NameRequest { case primaryOwner, taken }

    /// Asks for a well-known name, without queueing: `.taken` when another connection owns it
    /// and `replace` is false (or the owner does not allow replacement).
    public func requestName(_ name: String, replace: Bool) throws(DBusError) -> NameRequest {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let flags = UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE) | UInt32(DBUS_NAME_FLAG_ALLOW_REPLACEMENT) | (replace ? UInt32(DBUS_NAME_FLAG_REPLACE_EXISTING) : 0)
        let result = dbus_bus_request_name(pointer, name, flags, &error)
        if result < 0 { throw Self.take(&error) }
        return result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER ? .primaryOwner : .taken
    }

    /// Subscribes to signals matching `rule` (`type='signal',member='NameOwnerChanged'`).
    public func addMatch(_ rule: String) throws(DBusError) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        dbus_bus_add_match(pointer, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw Self.take(&error) }
    }

    /// Waits up to `timeout` milliseconds for traffic and returns the messages that arrived;
    /// `nil` once the bus is gone.
    public func receive(timeout: Int32) -> [DBusMessage]? {
        guard dbus_connection_read_write(pointer, timeout) != 0 else { return nil }
        var messages: [DBusMessage] = []
        while let message = dbus_connection_pop_message(pointer) { messages.append(DBusMessage(owning: message)) }
        return messages
    }

    public func send(_ message: DBusMessage) {
        dbus_connection_send(pointer, message.pointer, nil)
        dbus_connection_flush(pointer)
    }

    /// Calls and waits for the answer (up to `timeout` ms).
    /// - Throws: the error the callee answered with, or libdbus's (`NoReply`, `ServiceUnknown`).
    public func call(_ message: DBusMessage, timeout: Int32 = 25_000) throws(DBusError) -> DBusMessage {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        guard let reply = dbus_connection_send_with_reply_and_block(pointer, message.pointer, timeout, &error) else { throw Self.take(&error) }
        return DBusMessage(owning: reply)
    }

    /// The unique name owning `name` now; `nil` when nobody does.
    public func owner(of name: String) -> String? {
        let message = DBusMessage(call: "GetNameOwner", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", destination: "org.freedesktop.DBus")
        message.append([.string(name)])
        guard let reply = try? call(message, timeout: 5_000), case .string(let owner)? = reply.arguments.first else { return nil }
        return owner
    }

    /// The process id of a peer, as the bus daemon knows it (from the peer's socket, not from
    /// anything the peer claims).
    public func processID(of peer: String) -> Int32? {
        let message = DBusMessage(call: "GetConnectionUnixProcessID", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                  destination: "org.freedesktop.DBus")
        message.append([.string(peer)])
        guard let reply = try? call(message, timeout: 5_000), case .uint32(let pid)? = reply.arguments.first else { return nil }
        return Int32(bitPattern: pid)
    }

    private static func take(_ error: inout CDBus.DBusError) -> DBusError {
        defer { dbus_error_free(&error) }
        return DBusError(name: error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed",
                         message: error.message.map { String(cString: $0) } ?? "")
    }
}

// libdbus-1.a refers to systemd's socket-activation helpers for its server side, which Coffer
// never uses; libsystemd has no static archive, so the static executables get these answers:
// "no descriptors passed", "not a socket". (A shared build's libdbus-1.so has its own.)
@_cdecl("sd_listen_fds") func coffer_sd_listen_fds(_ unsetEnvironment: Int32) -> Int32 { 0 }
@_cdecl("sd_is_socket") func coffer_sd_is_socket(_ fd: Int32, _ family: Int32, _ type: Int32, _ listening: Int32) -> Int32 { 0 }
