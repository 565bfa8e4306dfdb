// Signals, sockets and spawning for Coffer's hosts (the SSH agent, `coffer run`), wrapped as plain
// functions. Deliberately WITHOUT _GNU_SOURCE (unlike CLinux): these headers bring in <sys/select.h>,
// whose fd_set differs with and without it, and clang refuses two modules that disagree. So GNU-only
// names are avoided or declared here: accept4 is declared below, struct ucred is spelled out, and
// POSIX_SPAWN_SETSID gets glibc's value when the header hides it. Header-only: nothing to link.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/// signalfd(2) for the signals in `mask` (which the caller has blocked): non-blocking, closed
/// in children.
static inline int coffer_signalfd(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/// The next signal waiting on a signalfd, or -1 when none is. `*sent` is 1 when a process sent
/// it with kill(2) or sigqueue(3), 0 when the kernel raised it (a terminal's Ctrl-C, which the
/// whole foreground process group gets anyway).
static inline int coffer_signalfd_next(int fd, int *sent) {
    struct signalfd_siginfo info;
    if (read(fd, &info, sizeof info) != (ssize_t)sizeof info) return -1;
    *sent = info.ssi_code == SI_USER || info.ssi_code == SI_QUEUE;
    return (int)info.ssi_signo;
}

/// The user id of the process at the other end of a Unix socket (SO_PEERCRED); -1 on error.
static inline long long coffer_peer_uid(int fd) {
    struct { pid_t pid; uid_t uid; gid_t gid; } credentials;  // struct ucred, which only _GNU_SOURCE names
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    return (long long)credentials.uid;
}

/// accept4 (Linux 2.6.28+, glibc 2.10+), which <sys/socket.h> declares only with _GNU_SOURCE.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// A waiting connection, non-blocking and close-on-exec from the start: one system call where
/// accept + three fcntl took four on every request an agent answers.
static inline int coffer_accept(int fd) {
    int client = accept4(fd, 0, 0, SOCK_CLOEXEC | SOCK_NONBLOCK);
    return client < 0 ? -1 : client;
}

/// posix_spawn's flag that starts the child in a new session (no controlling terminal).
static inline short coffer_spawn_setsid_flag(void) {
#ifdef POSIX_SPAWN_SETSID
    return POSIX_SPAWN_SETSID;
#else
    return 0x80;  // glibc's value, hidden without _GNU_SOURCE
#endif
}

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+): close every descriptor from `low`
/// up in the child. Declared here because <spawn.h> shows it only with _GNU_SOURCE.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int low);

static inline int coffer_spawn_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}

/// The signal (SIGINT or SIGTERM) that arrived while `coffer_catch_interrupts` was in force, or
/// 0. Header-only: one copy, in the one module that calls these (Coffer's Process/).
static volatile sig_atomic_t coffer_interrupt_signal = 0;

static inline void coffer_note_interrupt(int signal) { coffer_interrupt_signal = signal; }

/// Catches SIGINT and SIGTERM into `coffer_interrupt_signal` instead of ending the process, on
/// whichever thread they land (a work that runs on every core cannot block them all).
static inline int coffer_catch_interrupts(void) {
    coffer_interrupt_signal = 0;
    struct sigaction action = {0};
    action.sa_handler = coffer_note_interrupt;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGINT, &action, 0) != 0) return -1;
    return sigaction(SIGTERM, &action, 0);
}

/// Back to the default: the next SIGINT or SIGTERM ends the process.
static inline void coffer_release_interrupts(void) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

static inline int coffer_pending_interrupt(void) { return coffer_interrupt_signal; }
