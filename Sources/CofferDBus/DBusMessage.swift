import CDBus

/// The wire type codes (libdbus's `DBUS_TYPE_*` are C casts Swift cannot import).
enum DBusType {
    static let byte = Int32(UInt8(ascii: "y")), bool = Int32(UInt8(ascii: "b")), int32 = Int32(UInt8(ascii: "i"))
    static let uint32 = Int32(UInt8(ascii: "u")), int64 = Int32(UInt8(ascii: "x")), uint64 = Int32(UInt8(ascii: "t"))
    static let double = Int32(UInt8(ascii: "d")), int16 = Int32(UInt8(ascii: "n")), uint16 = Int32(UInt8(ascii: "q"))
    static let string = Int32(UInt8(ascii: "s")), objectPath = Int32(UInt8(ascii: "o")), signature = Int32(UInt8(ascii: "g"))
    static let array = Int32(UInt8(ascii: "a")), variant = Int32(UInt8(ascii: "v")), structure = Int32(UInt8(ascii: "r"))
    static let dictEntry = Int32(UInt8(ascii: "e")), unixFD = Int32(UInt8(ascii: "h")), invalid: Int32 = 0
}

/// A D-Bus message (libdbus's `DBusMessage`), owned: released when this goes.
public final class DBusMessage {
    let pointer: OpaquePointer

    public enum Kind: Int32 { case methodCall = 1, methodReturn = 2, error = 3, signal = 4 }

    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { dbus_message_unref(pointer) }

    /// A method call to `destination` (a client's: the import).
    public init(call member: String, path: String, interface: String, destination: String) {
        pointer = dbus_message_new_method_call(destination, path, interface, member)!
    }

    /// A signal from `path`.
    public init(signal member: String, path: String, interface: String) {
        pointer = dbus_message_new_signal(path, interface, member)!
    }

    public var kind: Kind? { Kind(rawValue: dbus_message_get_type(pointer)) }
    public var path: String { dbus_message_get_path(pointer).map { String(cString: $0) } ?? "" }
    public var interface: String { dbus_message_get_interface(pointer).map { String(cString: $0) } ?? "" }
    public var member: String { dbus_message_get_member(pointer).map { String(cString: $0) } ?? "" }
    public var sender: String { dbus_message_get_sender(pointer).map { String(cString: $0) } ?? "" }
    public var signature: String { dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }
    public var errorName: String { dbus_message_get_error_name(pointer).map { String(cString: $0) } ?? "" }
    public var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }

    /// The reply to this call carrying `values`.
    public func reply(_ values: [DBusValue]) -> DBusMessage {
        let reply = DBusMessage(owning: dbus_message_new_method_return(pointer)!)
        reply.append(values)
        return reply
    }

    /// The error reply `name` (`org.freedesktop.Secret.Error.IsLocked`…) with a message for people.
    public func errorReply(_ name: String, _ text: String) -> DBusMessage {
        DBusMessage(owning: dbus_message_new_error(pointer, name, text)!)
    }

    // MARK: Arguments

    /// The arguments, decoded. Types the Secret Service never uses (doubles, file descriptors)
    /// decode as placeholders, so a call carrying one is refused by its signature check.
    public var arguments: [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(Self.read(&iterator))
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    private static func read(_ iterator: inout DBusMessageIter) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        func basic<T: BitwiseCopyable>(_ zero: T) -> T {
            var value = zero
            withUnsafeMutableBytes(of: &value) { dbus_message_iter_get_basic(&iterator, $0.baseAddress) }
            return value
        }
        switch type {
        case DBusType.byte: return .byte(basic(UInt8(0)))
        case DBusType.bool: return .bool(basic(UInt32(0)) != 0)
        case DBusType.int32: return .int32(basic(Int32(0)))
        case DBusType.uint32: return .uint32(basic(UInt32(0)))
        case DBusType.int64: return .int64(basic(Int64(0)))
        case DBusType.uint64: return .uint64(basic(UInt64(0)))
        case DBusType.int16: return .int32(Int32(basic(Int16(0))))
        case DBusType.uint16: return .uint32(UInt32(basic(UInt16(0))))
        case DBusType.string, DBusType.objectPath, DBusType.signature:
            var pointer: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iterator, &pointer)
            let text = pointer.map { String(cString: $0) } ?? ""
            return type == DBusType.string ? .string(text) : type == DBusType.objectPath ? .objectPath(text) : .signature(text)
        case DBusType.array:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            let full = signature(of: &iterator)
            let element = String(full.dropFirst())
            if element == "y" {
                var data: UnsafePointer<UInt8>?
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &data) { dbus_message_iter_get_fixed_array(&sub, $0, &count) }
                return .bytes(data.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? [])
            }
            var elements: [DBusValue] = []
            var entries: [(DBusValue, DBusValue)] = []
            let isDictionary = element.hasPrefix("{")
            while dbus_message_iter_get_arg_type(&sub) != DBusType.invalid {
                if isDictionary {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &entry)
                    let key = read(&entry)
                    dbus_message_iter_next(&entry)
                    entries.append((key, read(&entry)))
                } else {
                    elements.append(read(&sub))
                }
                dbus_message_iter_next(&sub)
            }
            if isDictionary {
                let inner = element.dropFirst().dropLast()
                let keyLength = 1  // dictionary keys are basic types: one character
                return .dictionary(key: String(inner.prefix(keyLength)), value: String(inner.dropFirst(keyLength)), entries)
            }
            return .array(element: element, elements)
        case DBusType.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != DBusType.invalid {
                fields.append(read(&sub))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case DBusType.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(read(&sub))
        default:
            return .signature("?unsupported")
        }
    }

    private static func signature(of iterator: inout DBusMessageIter) -> String {
        guard let text = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(text) }
        return String(cString: text)
    }

    public func append(_ values: [DBusValue]) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iterator)
        for value in values { Self.write(value, to: &iterator) }
    }

    private static func write(_ value: DBusValue, to iterator: inout DBusMessageIter) {
        func basic<T: BitwiseCopyable>(_ type: Int32, _ value: T) {
            var copy = value
            withUnsafeBytes(of: &copy) { _ = dbus_message_iter_append_basic(&iterator, type, $0.baseAddress) }
        }
        func container(_ type: Int32, _ signature: String?, _ body: (inout DBusMessageIter) -> Void) {
            var sub = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, type, signature, &sub)
            body(&sub)
            dbus_message_iter_close_container(&iterator, &sub)
        }
        switch value {
        case .byte(let byte): basic(DBusType.byte, byte)
        case .bool(let flag): basic(DBusType.bool, UInt32(flag ? 1 : 0))
        case .int32(let number): basic(DBusType.int32, number)
        case .uint32(let number): basic(DBusType.uint32, number)
        case .int64(let number): basic(DBusType.int64, number)
        case .uint64(let number): basic(DBusType.uint64, number)
        case .string(let text), .objectPath(let text), .signature(let text):
            let type = if case .string = value { DBusType.string } else if case .objectPath = value { DBusType.objectPath } else { DBusType.signature }
            text.withCString { pointer in
                var cString: UnsafePointer<CChar>? = pointer
                dbus_message_iter_append_basic(&iterator, type, &cString)
            }
        case .bytes(let bytes):
            container(DBusType.array, "y") { sub in
                bytes.withUnsafeBufferPointer { buffer in
                    var base: UnsafePointer<UInt8>? = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                    dbus_message_iter_append_fixed_array(&sub, DBusType.byte, &base, Int32(buffer.count))
                }
            }
        case .array(let element, let elements):
            container(DBusType.array, element) { sub in for element in elements { write(element, to: &sub) } }
        case .dictionary(let key, let valueType, let entries):
            container(DBusType.array, "{" + key + valueType + "}") { sub in
                for (key, value) in entries {
                    var entry = DBusMessageIter()
                    dbus_message_iter_open_container(&sub, DBusType.dictEntry, nil, &entry)
                    write(key, to: &entry)
                    write(value, to: &entry)
                    dbus_message_iter_close_container(&sub, &entry)
                }
            }
        case .structure(let fields):
            container(DBusType.structure, nil) { sub in for field in fields { write(field, to: &sub) } }
        case .variant(let inner):
            container(DBusType.variant, inner.signature) { sub in write(inner, to: &sub) }
        }
    }
}
