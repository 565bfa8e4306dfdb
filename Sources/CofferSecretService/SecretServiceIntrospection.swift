/// `Introspect` answers: the interfaces of the specification, so generic tools (d-feet, busctl,
/// gdbus) can browse the service.
enum SecretServiceIntrospection {
    static func xml(for path: String) -> String {
        let object = SecretObjectPath(path, alias: { _ in "login" })
        let interface: String
        switch object {
        case .service?: interface = service
        case .collection?: interface = collection
        case .item?: interface = item
        case .session?: interface = #"<interface name="org.freedesktop.Secret.Session"><method name="Close"/></interface>"#
        case .prompt?: interface = prompt
        case nil: interface = ""
        }
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>\(common)\(interface)</node>
            """
    }

    static let common = """
        <interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>\
        <interface name="org.freedesktop.DBus.Properties"><method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>\
        <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>\
        <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>\
        <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal></interface>
        """

    static let service = """
        <interface name="org.freedesktop.Secret.Service">\
        <method name="OpenSession"><arg name="algorithm" type="s" direction="in"/><arg name="input" type="v" direction="in"/><arg name="output" type="v" direction="out"/><arg name="result" type="o" direction="out"/></method>\
        <method name="CreateCollection"><arg name="properties" type="a{sv}" direction="in"/><arg name="alias" type="s" direction="in"/><arg name="collection" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>\
        <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="locked" type="ao" direction="out"/></method>\
        <method name="Unlock"><arg name="objects" type="ao" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="prompt" type="o" direction="out"/></method>\
        <method name="Lock"><arg name="objects" type="ao" direction="in"/><arg name="locked" type="ao" direction="out"/><arg name="Prompt" type="o" direction="out"/></method>\
        <method name="GetSecrets"><arg name="items" type="ao" direction="in"/><arg name="session" type="o" direction="in"/><arg name="secrets" type="a{o(oayays)}" direction="out"/></method>\
        <method name="ReadAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="out"/></method>\
        <method name="SetAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="in"/></method>\
        <signal name="CollectionCreated"><arg name="collection" type="o"/></signal><signal name="CollectionDeleted"><arg name="collection" type="o"/></signal>\
        <signal name="CollectionChanged"><arg name="collection" type="o"/></signal>\
        <property name="Collections" type="ao" access="read"/></interface>
        """

    static let collection = """
        <interface name="org.freedesktop.Secret.Collection">\
        <method name="Delete"><arg name="prompt" type="o" direction="out"/></method>\
        <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="results" type="ao" direction="out"/></method>\
        <method name="CreateItem"><arg name="properties" type="a{sv}" direction="in"/><arg name="secret" type="(oayays)" direction="in"/><arg name="replace" type="b" direction="in"/><arg name="item" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>\
        <signal name="ItemCreated"><arg name="item" type="o"/></signal><signal name="ItemDeleted"><arg name="item" type="o"/></signal><signal name="ItemChanged"><arg name="item" type="o"/></signal>\
        <property name="Items" type="ao" access="read"/><property name="Label" type="s" access="readwrite"/><property name="Locked" type="b" access="read"/>\
        <property name="Created" type="t" access="read"/><property name="Modified" type="t" access="read"/></interface>
        """

    static let item = """
        <interface name="org.freedesktop.Secret.Item">\
        <method name="Delete"><arg name="Prompt" type="o" direction="out"/></method>\
        <method name="GetSecret"><arg name="session" type="o" direction="in"/><arg name="secret" type="(oayays)" direction="out"/></method>\
        <method name="SetSecret"><arg name="secret" type="(oayays)" direction="in"/></method>\
        <property name="Locked" type="b" access="read"/><property name="Attributes" type="a{ss}" access="readwrite"/><property name="Label" type="s" access="readwrite"/>\
        <property name="Created" type="t" access="read"/><property name="Modified" type="t" access="read"/></interface>
        """

    static let prompt = """
        <interface name="org.freedesktop.Secret.Prompt">\
        <method name="Prompt"><arg name="window-id" type="s" direction="in"/></method><method name="Dismiss"/>\
        <signal name="Completed"><arg name="dismissed" type="b"/><arg name="result" type="v"/></signal></interface>
        """
}
