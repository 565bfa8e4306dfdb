import CofferStore
/// Where a person's teams live on this device (SPEC.md §16.6): each in the group container
/// `team.<name>`, whose device state names the personal container that opens it.
public enum TeamDirectory {
    static let groupPrefix = "team."

    /// The container of team `name`.
    public static func container(named name: String, environment: Environment) throws -> GroupContainer {
        try GroupContainer(groupIdentifier: Vault.teamGroupIdentifier(name), environment: environment)
    }

    /// The teams on this device that `owner` (a personal container) opens, by name, with their
    /// vaults (locked). A container that is not a team, or another person's, is left out, and so
    /// is a team this person was removed from (SPEC.md §16.6) unless `includingRemoved`.
    public static func teams(
        ownedBy owner: GroupContainer, environment: Environment, configuration: VaultConfiguration, includingRemoved: Bool = false
    ) -> [(name: String, vault: Vault)] {
        let root = GroupContainer.dataHome(environment) + "/coffer/group-containers"
        guard let directory = try? configuration.fileSystem.openDirectory(atPath: root, check: .anyOwner),
              let names = try? configuration.fileSystem.contents(of: directory)
        else { return [] }
        let ownerPath = FileSystem.absolutePath(owner.path)
        return names.sorted().compactMap { group in
            guard group.hasPrefix(groupPrefix), let container = try? GroupContainer(groupIdentifier: group, environment: environment),
                  let vault = try? Vault.open(container, configuration: configuration),
                  vault.deviceState.teamOwner() == ownerPath, includingRemoved || vault.deviceState.teamRemoval() == nil
            else { return nil }
            return (String(group.dropFirst(groupPrefix.count)), vault)
        }
    }

    /// A team container's name: what follows `team.` in its directory's name.
    static func name(of container: GroupContainer) -> String? {
        let last = container.path.split(separator: "/").last.map(String.init) ?? ""
        return last.hasPrefix(groupPrefix) ? String(last.dropFirst(groupPrefix.count)) : nil
    }

    /// The personal container that opens `vault` here, if it is a team.
    public static func owner(of vault: Vault) -> GroupContainer? {
        vault.deviceState.teamOwner().map { GroupContainer(path: $0) }
    }
}
