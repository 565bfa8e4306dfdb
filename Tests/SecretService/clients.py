#!/usr/bin/python3
"""Real Secret Service clients for Coffer's tests: Python's secretstorage (both session
algorithms), Python's keyring library, and raw jeepney calls for hostile input.

    clients.py store ALGO LABEL SECRET NAME=VALUE...   create an item (replace), print its path
    clients.py read ALGO NAME=VALUE...                 print "label<TAB>secret" of each match
    clients.py delete NAME=VALUE...                    delete every match
    clients.py keyring SERVICE USER PASSWORD           keyring.set_password then get_password
    clients.py collection LABEL ALIAS                  CreateCollection, an item in it, ReadAlias; print
                                                       the collection's path, the item's and the alias's
    clients.py hostile                                 bad input; prints one JSON object of results
    clients.py vanish                                  Unlock → Prompt, then leave the bus at once
    clients.py create LABEL SECRET NAME=VALUE...       CreateItem by hand; through its Prompt when locked
                                                       ("prompt dismissed" or the item's path)
    clients.py signals SECONDS [MEMBER PATH]...        print the Secret Service signals seen for SECONDS,
                                                       or until each MEMBER PATH given was seen
    clients.py gnome-keyring PASSWORD_FILE DIRECTORY   start gnome-keyring-daemon, its login keyring
                                                       unlocked with the file's password; print its pid
    clients.py exec-after-connect PROGRAM NAME=VALUE... open a connection and a session, then exec
                                                       PROGRAM while a forked child calls GetSecret on
                                                       that connection; print the child's result
    clients.py get-secrets NAME=VALUE...               one GetSecrets call for every match; print the
                                                       number of secrets returned, or the error
    clients.py change ACTION NAME=VALUE...             on the first match: set-secret, relabel, delete or
                                                       replace (CreateItem with replace); print "ok" or
                                                       the error

ALGO is "plain" or "dh" (dh-ietf1024-sha256-aes128-cbc-pkcs7). Exit 3 on a D-Bus error, whose
name is printed on stderr.
"""
import json
import os
import sys
import time

import secretstorage
from jeepney import DBusAddress, HeaderFields, MessageType, MatchRule, new_method_call
from jeepney.io.blocking import open_dbus_connection, Proxy
from jeepney.bus_messages import message_bus

SERVICE = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")


def attributes(pairs):
    return dict(pair.split("=", 1) for pair in pairs)


def session_connection(algorithm):
    connection = secretstorage.dbus_init()
    if algorithm == "plain":
        # secretstorage opens a DH session by default; a plain one is what it falls back to.
        from secretstorage.util import DBusAddressWrapper
        from secretstorage.dhcrypto import Session
        service = DBusAddressWrapper(SERVICE.object_path, SERVICE.interface, connection)
        output, result = service.call("OpenSession", "sv", "plain", ("s", ""))
        session = Session()
        session.object_path = result
        session.encrypted = False
        return connection, session
    return connection, None


def collection(connection, session):
    default = secretstorage.get_default_collection(connection, session)
    return default


def call(connection, address, member, signature=None, *body, interface=None):
    message = new_method_call(address if interface is None else address.with_interface(interface), member, signature, body)
    reply = connection.send_and_get_reply(message, timeout=30)
    if reply.header.message_type == MessageType.error:
        return "error", reply.header.fields[HeaderFields.error_name]
    return "ok", reply.body


def main():
    command, arguments = sys.argv[1], sys.argv[2:]
    try:
        if command == "store":
            algorithm, label, secret, pairs = arguments[0], arguments[1], arguments[2], arguments[3:]
            connection, session = session_connection(algorithm)
            item = collection(connection, session).create_item(label, attributes(pairs), secret.encode(), replace=True)
            print(item.item_path)
        elif command == "read":
            connection, session = session_connection(arguments[0])
            for item in collection(connection, session).search_items(attributes(arguments[1:])):
                print("%s\t%s" % (item.get_label(), item.get_secret().decode()))
        elif command == "search":  # labels and lock state only: no secret is read
            connection = secretstorage.dbus_init()
            default = collection(connection, None)
            print("locked" if default.is_locked() else "unlocked")
            for item in default.search_items(attributes(arguments)):
                print(item.get_label())
        elif command == "delete":
            connection = secretstorage.dbus_init()
            for item in collection(connection, None).search_items(attributes(arguments)):
                item.delete()
        elif command == "collection":
            connection = secretstorage.dbus_init()
            made = secretstorage.create_collection(connection, arguments[0], arguments[1])
            item = made.create_item("In " + arguments[0], {"made": "here"}, b"collected")
            print(made.collection_path)
            print(item.item_path)
            print(secretstorage.get_collection_by_alias(connection, arguments[1]).collection_path)
            print(sorted(c.get_label() for c in secretstorage.get_all_collections(connection)))
        elif command == "keyring":
            import keyring
            service, user, password = arguments
            keyring.set_password(service, user, password)
            print(keyring.get_password(service, user))
            print(type(keyring.get_keyring()).__module__)
        elif command == "hostile":
            hostile()
        elif command == "vanish":
            connection = open_dbus_connection()
            status, body = call(connection, SERVICE, "Unlock", "ao", ["/org/freedesktop/secrets/collection/login"])
            prompt = body[1]
            if prompt != "/":
                connection.send(new_method_call(DBusAddress(prompt, bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Prompt"), "Prompt", "s", ("",)))
            time.sleep(0.2)
            connection.close()
            print(prompt)
        elif command == "gnome-keyring":
            # A new session and no inherited descriptors (close_fds), so the caller's pipes end
            # when this script does, as a session script would start it.
            import subprocess
            with open(arguments[0], "rb") as password:
                daemon = subprocess.Popen(
                    ["/usr/bin/gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets", "--control-directory=" + arguments[1]],
                    stdin=password, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            print(daemon.pid)
        elif command == "create":
            create(arguments[0], arguments[1].encode(), attributes(arguments[2:]))
        elif command == "exec-after-connect":
            exec_after_connect(arguments[0], attributes(arguments[1:]))
        elif command == "get-secrets":
            connection = open_dbus_connection()
            session = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))[1][1]
            unlocked, locked = call(connection, SERVICE, "SearchItems", "a{ss}", attributes(arguments))[1]
            status, body = call(connection, SERVICE, "GetSecrets", "aoo", unlocked + locked, session)
            print(len(body[0]) if status == "ok" else "error " + body)
        elif command == "change":
            change(arguments[0], attributes(arguments[1:]))
        elif command == "signals":
            connection = open_dbus_connection()
            rule = MatchRule(type="signal", path_namespace="/org/freedesktop/secrets")
            Proxy(message_bus, connection).AddMatch(rule)
            awaited = {" ".join(pair) for pair in zip(arguments[1::2], arguments[2::2])}
            with connection.filter(rule) as queue:
                print("listening", flush=True)
                deadline = time.time() + float(arguments[0])
                while time.time() < deadline:
                    try:
                        message = connection.recv_until_filtered(queue, timeout=max(0.05, deadline - time.time()))
                    except TimeoutError:
                        break
                    seen = f"{message.header.fields[HeaderFields.member]} {message.header.fields[HeaderFields.path]}"
                    print(seen, flush=True)
                    awaited.discard(seen)
                    if arguments[1:] and not awaited:
                        break
        else:
            sys.exit("unknown command " + command)
    except secretstorage.exceptions.SecretServiceNotAvailableException as error:
        print("not available: %s" % error, file=sys.stderr)
        sys.exit(3)
    except Exception as error:  # a D-Bus error reply: its name on stderr
        print("%s: %s" % (type(error).__name__, error), file=sys.stderr)
        sys.exit(3)


def create(label, secret, pairs):
    connection = open_dbus_connection()
    status, body = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
    login = DBusAddress("/org/freedesktop/secrets/aliases/default", bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Collection")
    properties = {"org.freedesktop.Secret.Item.Label": ("s", label), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", pairs)}
    status, body = call(connection, login, "CreateItem", "a{sv}(oayays)b", properties, (body[1], b"", secret, "text/plain"), False)
    if status == "error":
        sys.exit("error " + body)
    item, prompt = body
    if prompt == "/":
        print(item)
        return
    rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed", path=prompt)
    Proxy(message_bus, connection).AddMatch(rule)
    with connection.filter(rule) as queue:
        call(connection, DBusAddress(prompt, bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Prompt"), "Prompt", "s", "")
        message = connection.recv_until_filtered(queue, timeout=30)
    dismissed, (signature, result) = message.body
    print("prompt dismissed" if dismissed else result)


def exec_after_connect(program, pairs):
    """The probe of issue 51: a connection whose first call came from this process is handed to
    a forked child, and this process becomes PROGRAM (the one that stored the item). The bus
    still names this pid as the connection's process, whose executable is now PROGRAM."""
    connection = open_dbus_connection()
    session = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))[1][1]
    unlocked, locked = call(connection, SERVICE, "SearchItems", "a{ss}", pairs)[1]
    item = DBusAddress((unlocked + locked)[0], bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Item")
    hold, release = os.pipe()
    parent = os.getpid()
    if os.fork() == 0:
        os.close(hold)
        target = os.path.realpath(program)
        deadline = time.time() + 10
        while time.time() < deadline and os.path.realpath("/proc/%d/exe" % parent) != target:
            time.sleep(0.01)
        status, body = call(connection, item, "GetSecret", "o", session)
        print(("secret " + bytes(body[0][2]).decode()) if status == "ok" else "error " + body, flush=True)
        os.kill(parent, 9)
        os._exit(0)
    os.close(release)
    os.dup2(hold, 0)  # PROGRAM reads a secret to store from stdin: it waits until it is killed
    os.execv(program, [program, "store", "--label=never stored", "probe", "exec"])


def change(action, pairs):
    connection = open_dbus_connection()
    session = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))[1][1]
    unlocked, locked = call(connection, SERVICE, "SearchItems", "a{ss}", pairs)[1]
    path = (unlocked + locked)[0]
    item = DBusAddress(path, bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Item")
    if action == "set-secret":
        status, body = call(connection, item, "SetSecret", "(oayays)", (session, b"", b"overwritten", "text/plain"))
    elif action == "relabel":
        status, body = call(connection, item, "Set", "ssv", "org.freedesktop.Secret.Item", "Label", ("s", "relabelled"),
                            interface="org.freedesktop.DBus.Properties")
    elif action == "delete":
        status, body = call(connection, item, "Delete", None)
    elif action == "replace":
        login = DBusAddress("/org/freedesktop/secrets/aliases/default", bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Collection")
        properties = {"org.freedesktop.Secret.Item.Label": ("s", "replaced"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", pairs)}
        status, body = call(connection, login, "CreateItem", "a{sv}(oayays)b", properties, (session, b"", b"replaced", "text/plain"), True)
    else:
        sys.exit("unknown action " + action)
    print("ok" if status == "ok" else "error " + body)


def hostile():
    """Each case: the error name the service answered (or "ok"), then the service still serves."""
    connection = open_dbus_connection()
    results = {}
    status, body = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
    session = body[1]
    login = DBusAddress("/org/freedesktop/secrets/collection/login", bus_name=SERVICE.bus_name, interface="org.freedesktop.Secret.Collection")

    def secret(value, path=session):
        return (path, b"", value, "text/plain")

    def item_properties(pairs):
        return {"org.freedesktop.Secret.Item.Label": ("s", "hostile"), "org.freedesktop.Secret.Item.Attributes": ("a{ss}", pairs)}

    results["wrong types"] = call(connection, SERVICE, "SearchItems", "s", "not a dict")[1]
    results["unknown method"] = call(connection, SERVICE, "Explode", None)[1]
    results["unknown object"] = call(connection, DBusAddress("/org/freedesktop/secrets/collection/login/zz", bus_name=SERVICE.bus_name,
                                                             interface="org.freedesktop.Secret.Item"), "GetSecret", "o", session)[1]
    results["unknown item"] = call(connection, DBusAddress("/org/freedesktop/secrets/collection/login/" + "0" * 32, bus_name=SERVICE.bus_name,
                                                           interface="org.freedesktop.Secret.Item"), "GetSecret", "o", session)[1]
    results["unknown collection"] = call(connection, DBusAddress("/org/freedesktop/secrets/collection/nothere", bus_name=SERVICE.bus_name,
                                                                 interface="org.freedesktop.Secret.Collection"), "SearchItems", "a{ss}", {})[1]
    results["unknown algorithm"] = call(connection, SERVICE, "OpenSession", "sv", "rot13", ("s", ""))[1]
    for name, key in [("zero", b"\x00"), ("one", b"\x01"), ("too long", b"\x05" * 129), ("p-1", bytes.fromhex(
            "ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74020bbea63b139b22514a08798e3404ddef9519b3cd3a431b302b0a6df25f1437"
            "4fe1356d6d51c245e485b576625e7ec6f44c42e9a637ed6b0bff5cb6f406b7edee386bfb5a899fa5ae9f24117c4b1fe649286651ece65381fffffffffffffffe"))]:
        results["dh " + name] = call(connection, SERVICE, "OpenSession", "sv", "dh-ietf1024-sha256-aes128-cbc-pkcs7", ("ay", key))[1]
    results["10 MB secret"] = call(connection, login, "CreateItem", "a{sv}(oayays)b", item_properties({"case": "big"}),
                                   secret(b"x" * (10 << 20)), True)[1]
    results["10 MB attribute"] = call(connection, login, "CreateItem", "a{sv}(oayays)b", item_properties({"case": "y" * (10 << 20)}),
                                      secret(b"x"), True)[1]
    results["100000 attributes"] = call(connection, login, "CreateItem", "a{sv}(oayays)b",
                                        item_properties({"a%d" % i: "v" for i in range(100000)}), secret(b"x"), True)[1]
    results["malformed secret"] = call(connection, login, "CreateItem", "a{sv}(oayays)b", item_properties({"case": "bad"}),
                                       ("/org/freedesktop/secrets/session/999999", b"", b"x", "text/plain"), True)[1]
    other = open_dbus_connection()
    results["another connection's session"] = call(other, login, "CreateItem", "a{sv}(oayays)b", item_properties({"case": "other"}),
                                                   secret(b"x"), True)[1]
    results["another connection's prompt"] = call(other, DBusAddress("/org/freedesktop/secrets/prompt/1", bus_name=SERVICE.bus_name,
                                                                     interface="org.freedesktop.Secret.Prompt"), "Dismiss", None)[1]
    for _ in range(70):
        status, body = call(connection, SERVICE, "OpenSession", "sv", "plain", ("s", ""))
    results["sessions in a loop"] = body
    results["still serving"] = call(connection, SERVICE, "SearchItems", "a{ss}", {"case": "big"})
    print(json.dumps(results, default=list))


if __name__ == "__main__":
    main()
