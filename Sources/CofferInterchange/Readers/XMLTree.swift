import CofferProvider
import CLibXML2

/// An XML document as a tree of plain values, read with libxml2 (loaded on use) and freed at
/// once. Hostile input is refused before libxml2 sees it: no DTD, so no entity can be declared
/// (the billion-laughs expansion needs one) and nothing external is fetched; the network is off
/// (`XML_PARSE_NONET`) and libxml2's own depth and size limits stay on (no `XML_PARSE_HUGE`).
struct XMLElement: Sendable {
    let name: String
    let attributes: [(name: String, value: String)]
    let children: [XMLElement]
    /// The element's own text (text and CDATA children, concatenated).
    let text: String
    let line: Int

    func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
    func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
    func children(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }

    typealias ReadMemory = @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> xmlDocPtr?
    typealias FreeDoc = @convention(c) (xmlDocPtr?) -> Void
    typealias LastError = @convention(c) () -> xmlErrorPtr?

    /// Parses `text`; the root element.
    static func parse(_ text: String) throws(ImportError) -> XMLElement {
        for marker in ["<!DOCTYPE", "<!ENTITY", "<!doctype"] where text.contains(marker) {
            throw .malformed(location: "the XML", reason: "a document type declaration (\(marker)): refused, entities can expand without bound")
        }
        let library: LoadedLibrary
        let read: ReadMemory, freeDoc: FreeDoc, lastError: LastError
        do {
            library = try LoadedLibrary("libxml2.so.2", package: "libxml2", purpose: "reading KeePass XML")
            read = try library.function("xmlReadMemory", as: ReadMemory.self)
            freeDoc = try library.function("xmlFreeDoc", as: FreeDoc.self)
            lastError = try library.function("xmlGetLastError", as: LastError.self)
        } catch {
            throw .malformed(location: "the XML", reason: "\(error)")
        }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)
        let bytes = Array(text.utf8)
        guard bytes.count < Int32.max else { throw .malformed(location: "the XML", reason: "too large") }
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { read($0.baseAddress, Int32($0.count), "import.xml", "UTF-8", options) }
        }
        guard let document else {
            let error = lastError()
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } }?.trimmingSpaces() ?? "not well-formed"
            throw .malformed(location: "line \(error?.pointee.line ?? 0)", reason: "XML: \(message.split(separator: "\n").first ?? "")")
        }
        defer { freeDoc(document) }
        guard document.pointee.intSubset == nil else { throw .malformed(location: "the XML", reason: "a document type declaration: refused") }
        var node = document.pointee.children
        while let current = node, current.pointee.type != XML_ELEMENT_NODE { node = current.pointee.next }
        guard let root = node else { throw .malformed(location: "the XML", reason: "no root element") }
        return element(root)
    }

    private static func element(_ node: xmlNodePtr) -> XMLElement {
        var attributes: [(String, String)] = []
        var attribute = node.pointee.properties
        while let current = attribute {
            let value = current.pointee.children.flatMap { $0.pointee.content.map { String(cString: $0) } } ?? ""
            attributes.append((String(cString: current.pointee.name), value))
            attribute = current.pointee.next
        }
        var children: [XMLElement] = []
        var text = ""
        var child = node.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE: children.append(element(current))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: text += current.pointee.content.map { String(cString: $0) } ?? ""
            default: break
            }
            child = current.pointee.next
        }
        return XMLElement(
            name: String(cString: node.pointee.name), attributes: attributes, children: children, text: text, line: Int(node.pointee.line))
    }
}
