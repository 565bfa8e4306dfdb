import CofferProvider
import FoundationEssentials

/// The password exports of browsers: Chrome, Chromium and Edge (`name,url,username,password,note`),
/// Firefox (`url,username,password,httpRealm,formActionOrigin,guid,timeCreated,timeLastUsed,
/// timePasswordChanged`) and Safari / Apple Passwords (`Title,URL,Username,Password,Notes,OTPAuth`).
enum BrowserImport {
    static func read(_ table: CSVTable, format: ImportFormat) throws(ImportError) -> (items: [ImportedItem], report: ImportReport) {
        var report = ImportReport(format: format)
        let known: [String] = switch format {
        case .chrome: ["name", "url", "username", "password", "note"]
        case .firefox: ["url", "username", "password", "httprealm", "formactionorigin", "guid", "timecreated", "timelastused", "timepasswordchanged"]
        default: ["title", "url", "username", "password", "notes", "otpauth"]
        }
        var items: [ImportedItem] = []
        for (line, value, extra) in table.records(known: known, report: &report) {
            let origin = "line \(line)"
            var draft = RecordDraft(serviceIdentifiers: ImportValues.services([value("url")]), user: value("username"), password: value("password"))
            report.kept(table.header[table.column("url") ?? 0], as: "service identifiers", value: value("url"))
            report.kept("username", as: "user", value: draft.user)
            report.kept("password", as: "password", value: draft.password)
            switch format {
            case .chrome:
                draft.name = value("name")
                report.kept("name", as: "name", value: draft.name)
                draft.notes = value("note")
                report.kept("note", as: "notes", value: draft.notes)
            case .firefox:
                // The realm of an HTTP authentication login is part of what it is for.
                if !value("httprealm").isEmpty { draft.fields.append(RecordField(name: "httpRealm", value: value("httprealm"))) }
                report.kept("httpRealm", as: "field 'httpRealm'", value: value("httprealm"))
                let action = value("formactionorigin")
                if !action.isEmpty, !draft.serviceIdentifiers.contains(where: { $0.identifier == action }) {
                    draft.serviceIdentifiers += ImportValues.services([action])
                }
                report.kept("formActionOrigin", as: "service identifiers", value: action)
                report.dropped("guid", because: "Firefox's own id", value: value("guid"))
                // Milliseconds since 1970.
                func date(_ column: String) -> Date? { Int64(value(column)).map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) } }
                draft.created = date("timecreated")
                report.kept("timeCreated", as: "created", value: value("timecreated"))
                draft.modified = date("timepasswordchanged")
                report.kept("timePasswordChanged", as: "modified", value: value("timepasswordchanged"))
                report.dropped("timeLastUsed", because: "use is counted per device, from the first fill here", value: value("timelastused"))
            default:
                draft.name = value("title")
                report.kept("Title", as: "name", value: draft.name)
                draft.notes = value("notes")
                report.kept("Notes", as: "notes", value: draft.notes)
                ImportValues.keepOneTimeCode(value("otpauth"), in: &draft, at: origin, report: &report)
                report.kept("OTPAuth", as: "one-time code", value: value("otpauth"))
            }
            draft.fields += extra
            items.append(ImportedItem(origin: origin, draft: try ImportValues.checked(draft, at: origin)))
        }
        return (items, report)
    }
}
