//! The seccomp filter every sandboxed process runs under. It closes the two ways a process
//! could leave the exec supervisor's sight: `clone` with `CLONE_UNTRACED` (the kernel then does
//! not attach the child to the tracer) and `clone3` (whose flags sit in memory a filter cannot
//! read; it fails with `ENOSYS`, and C libraries fall back to `clone`). System calls of another
//! ABI than the native one (32-bit `int 0x80`, x32) fail with `ENOSYS`, so none of them can
//! reach `clone` by another number.
//!
//! Sockets of a family the sandbox's network namespace does not enclose fail with `EPERM`:
//! only `AF_INET`, `AF_INET6` and `AF_NETLINK` (which the namespace holds) are made, and
//! `AF_UNIX` where the plan lets it (a Unix socket on the file system, a container engine's or
//! a desktop bus, is a way out that no mount closes). `AF_VSOCK` (to a virtual machine's
//! host), `AF_PACKET`, Bluetooth and the rest are refused. `socketpair` stays, so processes
//! still talk among themselves. `io_uring` fails with
//! `ENOSYS`: its operations (opening sockets among them) never pass through the filter.
//!
//! Confined, a new user namespace (`clone` or `unshare` with `CLONE_NEWUSER`) fails with
//! `EPERM`: the kernel keeps the sandbox's mounts locked in one, but nothing a command needs
//! is worth that surface.
//!
//! `prctl(PR_SET_MM)` fails with `EPERM` in every mode: it rewrites what the kernel keeps of
//! a process's memory layout, which the supervisor reads.
//!
//! The filter is a classic BPF program in the form bubblewrap's `--seccomp FD` reads. A second,
//! smaller one ([`notify_program`]) is installed with a listener before bubblewrap starts: it
//! hands every `execve` to the `notify` supervisor.

/// `struct sock_filter`: one BPF instruction.
#[derive(Debug, Clone, Copy)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

/// Offsets into `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0_LOW: u32 = 16;

const CLONE_VM: u32 = 0x0000_0100;
const CLONE_FS: u32 = 0x0000_0200;
const CLONE_VFORK: u32 = 0x0000_4000;
const CLONE_PARENT: u32 = 0x0000_8000;
const CLONE_THREAD: u32 = 0x0001_0000;
const CLONE_UNTRACED: u32 = 0x0080_0000;
const CLONE_NEWUSER: u32 = 0x1000_0000;
const SYS_CLONE3: u32 = 435;
/// `io_uring_setup`, `io_uring_enter`, `io_uring_register` (the same on every ABI).
const SYS_IO_URING: [u32; 3] = [425, 426, 427];
/// `prctl(PR_SET_MM, …)`: rewrites what the kernel keeps of a process's memory layout, its
/// auxiliary vector among it, which the exec supervisor reads to tell the line's shell from
/// the programs it started.
const PR_SET_MM: u32 = 35;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const AF_UNIX: u32 = 1;
const AF_INET: u32 = 2;
const AF_INET6: u32 = 10;
const AF_NETLINK: u32 = 16;

/// The native ABI: its audit arch, its `clone` and `socket` numbers, and the bit that marks x32
/// calls.
struct Abi {
    arch: u32,
    clone: u32,
    socket: u32,
    unshare: u32,
    prctl: u32,
    ptrace: u32,
    process_vm_writev: u32,
    userfaultfd: u32,
    /// `io_setup` and `io_submit` (native asynchronous I/O).
    aio: [u32; 2],
    execve: u32,
    execveat: u32,
    x32: Option<u32>,
}

#[cfg(target_arch = "x86_64")]
const NATIVE: Option<Abi> = Some(Abi {
    arch: 0xc000_003e,
    clone: 56,
    socket: 41,
    unshare: 272,
    prctl: 157,
    ptrace: 101,
    process_vm_writev: 311,
    userfaultfd: 323,
    aio: [206, 209],
    execve: 59,
    execveat: 322,
    x32: Some(0x4000_0000),
});
#[cfg(target_arch = "aarch64")]
const NATIVE: Option<Abi> = Some(Abi {
    arch: 0xc000_00b7,
    clone: 220,
    socket: 198,
    unshare: 97,
    prctl: 167,
    ptrace: 117,
    process_vm_writev: 271,
    userfaultfd: 282,
    aio: [0, 2],
    execve: 221,
    execveat: 281,
    x32: None,
});
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NATIVE: Option<Abi> = None;

/// A jump target while the program is assembled.
#[derive(Clone, Copy)]
enum To {
    Next,
    /// Past this many following instructions.
    Skip(usize),
    Allow,
    NoSys,
    Perm,
    Notify,
}

/// The filter as bytes, or `None` on an architecture it is not written for (the supervisor
/// then cannot rule out `CLONE_UNTRACED`, and says so). `confined` (under bubblewrap), sockets
/// of families the namespace does not enclose and new user namespaces are refused; with
/// `unix_sockets`, `socket(AF_UNIX)` is let through then.
///
/// `sealed`, no process of the command can reach into another's memory: `ptrace` (which the
/// supervisor that stops each `execve` needs to itself), `process_vm_writev` and
/// `userfaultfd` fail with `EPERM`, native AIO (`io_setup`, `io_submit`) with `ENOSYS`, and `clone` shares memory only to make a thread or a
/// `vfork` child (`CLONE_VM` without `CLONE_THREAD` fails unless with `CLONE_VFORK` and
/// without `CLONE_PARENT`) and the working directory only with a thread (`CLONE_FS` without
/// `CLONE_THREAD` fails: another process could change it after the supervisor read it). Programs can then be decided at their `execve`'s entry (see
/// `entry`).
pub(crate) fn program(unix_sockets: bool, confined: bool, sealed: bool) -> Option<Vec<u8>> {
    let abi = NATIVE?;
    let mut body = native_only(&abi);
    body.push((BPF_JEQ_K, To::NoSys, To::Next, SYS_CLONE3));
    for nr in SYS_IO_URING {
        body.push((BPF_JEQ_K, To::NoSys, To::Next, nr));
    }
    if sealed {
        for nr in [abi.ptrace, abi.process_vm_writev, abi.userfaultfd] {
            body.push((BPF_JEQ_K, To::Perm, To::Next, nr));
        }
        // Native AIO writes a read's data into the caller's memory whenever it completes,
        // with no task of the caller running; `ENOSYS`, as where it is not built in.
        for nr in abi.aio {
            body.push((BPF_JEQ_K, To::NoSys, To::Next, nr));
        }
    }
    // prctl(PR_SET_MM, …): refused; the next instruction reloads the number.
    body.extend([
        (BPF_JEQ_K, To::Next, To::Skip(3), abi.prctl),
        (BPF_LD_W_ABS, To::Next, To::Next, OFF_ARG0_LOW),
        (BPF_JEQ_K, To::Perm, To::Next, PR_SET_MM),
        (BPF_LD_W_ABS, To::Next, To::Next, OFF_NR),
    ]);
    if confined {
        // unshare(CLONE_NEWUSER | …): refused; the next instruction reloads the number.
        body.extend([
            (BPF_JEQ_K, To::Next, To::Skip(2), abi.unshare),
            (BPF_LD_W_ABS, To::Next, To::Next, OFF_ARG0_LOW),
            (BPF_JSET_K, To::Perm, To::Allow, CLONE_NEWUSER),
        ]);
    }
    // socket(family, …): only the families the namespace encloses. The check's length is
    // known, so a call that is not `socket` skips it to the `clone` check below.
    // Unconfined there is no namespace to hold any: sockets are as the system allows them.
    if confined {
        let mut families = vec![AF_INET, AF_INET6, AF_NETLINK];
        if unix_sockets {
            families.push(AF_UNIX);
        }
        body.push((
            BPF_JEQ_K,
            To::Next,
            To::Skip(families.len() + 2),
            abi.socket,
        ));
        body.push((BPF_LD_W_ABS, To::Next, To::Next, OFF_ARG0_LOW));
        for f in &families {
            body.push((BPF_JEQ_K, To::Allow, To::Next, *f));
        }
        body.push((BPF_JEQ_K, To::Perm, To::Perm, 0));
    }
    let refused_clone = if confined {
        CLONE_UNTRACED | CLONE_NEWUSER
    } else {
        CLONE_UNTRACED
    };
    body.extend([
        (BPF_JEQ_K, To::Next, To::Allow, abi.clone),
        (BPF_LD_W_ABS, To::Next, To::Next, OFF_ARG0_LOW),
    ]);
    if sealed {
        body.extend([
            (BPF_JSET_K, To::Perm, To::Next, refused_clone),
            (BPF_JSET_K, To::Allow, To::Next, CLONE_THREAD),
            (BPF_JSET_K, To::Perm, To::Next, CLONE_FS),
            (BPF_JSET_K, To::Next, To::Allow, CLONE_VM),
            (BPF_JSET_K, To::Perm, To::Next, CLONE_PARENT),
            (BPF_JSET_K, To::Allow, To::Perm, CLONE_VFORK),
        ]);
    } else {
        body.push((BPF_JSET_K, To::Perm, To::Allow, refused_clone));
    }
    Some(assemble(&body))
}

/// The filter that hands every `execve` and `execveat` of the process and everything it starts
/// to the supervisor (`SECCOMP_RET_USER_NOTIF`), installed with a listener before bubblewrap
/// starts. System calls of another ABI fail with `ENOSYS`, so no `execve` goes by another
/// number. `None` on an architecture it is not written for.
pub(crate) fn notify_program() -> Option<Vec<u8>> {
    let abi = NATIVE?;
    let mut body = native_only(&abi);
    body.extend([
        (BPF_JEQ_K, To::Notify, To::Next, abi.execve),
        (BPF_JEQ_K, To::Notify, To::Allow, abi.execveat),
    ]);
    Some(assemble(&body))
}

/// The start of every program: a system call of another ABI (another architecture, or x32)
/// fails with `ENOSYS`; then the call's number is loaded for the checks that follow. Each
/// instruction is (code, jump if true, jump if false, k), jumps naming a label.
fn native_only(abi: &Abi) -> Vec<(u16, To, To, u32)> {
    let mut body = vec![
        (BPF_LD_W_ABS, To::Next, To::Next, OFF_ARCH),
        (BPF_JEQ_K, To::Next, To::NoSys, abi.arch),
        (BPF_LD_W_ABS, To::Next, To::Next, OFF_NR),
    ];
    if let Some(bit) = abi.x32 {
        body.push((BPF_JGE_K, To::NoSys, To::Next, bit));
    }
    body
}

/// The program's bytes: `body`, then the four returns its jumps name.
fn assemble(body: &[(u16, To, To, u32)]) -> Vec<u8> {
    // The returns follow the body, in this order.
    let allow = body.len();
    let target = |to: To, at: usize| -> u8 {
        let dest = match to {
            To::Next => at + 1,
            To::Skip(n) => at + 1 + n,
            To::Allow => allow,
            To::NoSys => allow + 1,
            To::Perm => allow + 2,
            To::Notify => allow + 3,
        };
        // Every jump is forward and short: the program is a few dozen instructions.
        u8::try_from(dest - at - 1).unwrap_or(u8::MAX)
    };
    let mut insns: Vec<Insn> = body
        .iter()
        .enumerate()
        .map(|(at, &(code, jt, jf, k))| {
            let conditional = code != BPF_LD_W_ABS;
            Insn {
                code,
                jt: if conditional { target(jt, at) } else { 0 },
                jf: if conditional { target(jf, at) } else { 0 },
                k,
            }
        })
        .collect();
    let ret = |k| Insn {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k,
    };
    insns.push(ret(SECCOMP_RET_ALLOW));
    insns.push(ret(SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    insns.push(ret(SECCOMP_RET_ERRNO | libc::EPERM as u32));
    insns.push(ret(SECCOMP_RET_USER_NOTIF));
    let mut bytes = Vec::with_capacity(insns.len() * 8);
    for i in insns {
        bytes.extend_from_slice(&i.code.to_ne_bytes());
        bytes.push(i.jt);
        bytes.push(i.jf);
        bytes.extend_from_slice(&i.k.to_ne_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run the filter on one `seccomp_data` as the kernel would.
    fn run(prog: &[u8], arch: u32, nr: u32, arg0: u64) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        data[16..24].copy_from_slice(&arg0.to_ne_bytes());
        let insns: Vec<Insn> = prog
            .chunks(8)
            .map(|c| Insn {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = insns[pc];
            match i.code {
                BPF_LD_W_ABS => {
                    let o = i.k as usize;
                    acc = u32::from_ne_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]);
                    pc += 1;
                }
                BPF_RET_K => return i.k,
                code => {
                    let taken = match code {
                        BPF_JEQ_K => acc == i.k,
                        BPF_JGE_K => acc >= i.k,
                        BPF_JSET_K => acc & i.k != 0,
                        other => panic!("unknown opcode {other:#x}"),
                    };
                    pc += 1 + usize::from(if taken { i.jt } else { i.jf });
                }
            }
        }
    }

    #[test]
    fn the_filter_refuses_untraced_clones_and_clone3_and_passes_the_rest() {
        let Some(prog) = program(false, true, false) else {
            return;
        };
        let Some(abi) = NATIVE else {
            return;
        };
        let (arch, clone, x32) = (abi.arch, abi.clone, abi.x32);
        let errno = |e: i32| SECCOMP_RET_ERRNO | e as u32;
        assert_eq!(run(&prog, arch, 0, 0), SECCOMP_RET_ALLOW, "read");
        assert_eq!(run(&prog, arch, clone, 0x11), SECCOMP_RET_ALLOW, "fork");
        assert_eq!(
            run(&prog, arch, clone, u64::from(CLONE_UNTRACED) | 0x11),
            errno(libc::EPERM)
        );
        assert_eq!(run(&prog, arch, SYS_CLONE3, 0), errno(libc::ENOSYS));
        assert_eq!(run(&prog, 0x4000_0003, clone, 0), errno(libc::ENOSYS));
        if let Some(bit) = x32 {
            assert_eq!(run(&prog, arch, bit | clone, 0), errno(libc::ENOSYS));
        }
        assert_eq!(
            run(&prog, arch, abi.socket, 1),
            errno(libc::EPERM),
            "AF_UNIX"
        );
        assert_eq!(
            run(&prog, arch, abi.socket, 2),
            SECCOMP_RET_ALLOW,
            "AF_INET"
        );
        assert_eq!(
            run(&prog, arch, abi.socket, 10),
            SECCOMP_RET_ALLOW,
            "AF_INET6"
        );
        assert_eq!(
            run(&prog, arch, abi.socket, 16),
            SECCOMP_RET_ALLOW,
            "AF_NETLINK"
        );
        for (family, name) in [(40, "AF_VSOCK"), (17, "AF_PACKET"), (31, "AF_BLUETOOTH")] {
            assert_eq!(
                run(&prog, arch, abi.socket, family),
                errno(libc::EPERM),
                "{name}"
            );
        }
        for nr in SYS_IO_URING {
            assert_eq!(run(&prog, arch, nr, 0), errno(libc::ENOSYS), "io_uring");
        }
        assert_eq!(
            run(&prog, arch, abi.unshare, u64::from(CLONE_NEWUSER)),
            errno(libc::EPERM)
        );
        assert_eq!(
            run(&prog, arch, abi.unshare, 0x0002_0000),
            SECCOMP_RET_ALLOW,
            "unshare(CLONE_NEWNS)"
        );
        assert_eq!(
            run(&prog, arch, clone, u64::from(CLONE_NEWUSER) | 0x11),
            errno(libc::EPERM)
        );
        // Unconfined: Unix sockets and user namespaces as the system allows them.
        let open = program(true, false, false).unwrap_or_default();
        assert_eq!(run(&open, arch, abi.socket, 1), SECCOMP_RET_ALLOW);
        assert_eq!(
            run(&open, arch, abi.socket, 40),
            SECCOMP_RET_ALLOW,
            "AF_VSOCK"
        );
        // Confined with Unix sockets allowed: those too.
        let unix = program(true, true, false).unwrap_or_default();
        assert_eq!(run(&unix, arch, abi.socket, 1), SECCOMP_RET_ALLOW);
        assert_eq!(run(&unix, arch, abi.socket, 40), errno(libc::EPERM));
        assert_eq!(
            run(&open, arch, abi.unshare, u64::from(CLONE_NEWUSER)),
            SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(&open, arch, clone, u64::from(CLONE_NEWUSER)),
            SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(&open, arch, clone, u64::from(CLONE_UNTRACED)),
            errno(libc::EPERM)
        );
        // prctl(PR_SET_MM) in every mode; other prctl options pass.
        for p in [&prog, &open, &unix] {
            assert_eq!(
                run(p, arch, abi.prctl, u64::from(PR_SET_MM)),
                errno(libc::EPERM)
            );
            assert_eq!(
                run(p, arch, abi.prctl, 15),
                SECCOMP_RET_ALLOW,
                "PR_SET_NAME"
            );
            assert_eq!(run(p, arch, abi.execve, 0), SECCOMP_RET_ALLOW);
            assert_eq!(run(p, arch, abi.ptrace, 0), SECCOMP_RET_ALLOW);
        }
        let watched = program(false, true, true).unwrap_or_default();
        assert_eq!(run(&watched, arch, abi.ptrace, 0), errno(libc::EPERM));
        assert_eq!(run(&watched, arch, 0, 0), SECCOMP_RET_ALLOW, "read");
        // Sealed: nothing writes another process's memory, and memory is shared only with a
        // thread or a vfork child.
        for nr in [abi.process_vm_writev, abi.userfaultfd] {
            assert_eq!(run(&watched, arch, nr, 0), errno(libc::EPERM));
            assert_eq!(run(&prog, arch, nr, 0), SECCOMP_RET_ALLOW);
        }
        for nr in abi.aio {
            assert_eq!(run(&watched, arch, nr, 0), errno(libc::ENOSYS), "aio");
            assert_eq!(run(&prog, arch, nr, 0), SECCOMP_RET_ALLOW, "aio");
        }
        // glibc's pthread_create, posix_spawn and fork.
        let thread = 0x003d_0f00u64;
        let spawn = u64::from(CLONE_VM | CLONE_VFORK) | 17;
        let fork = 0x0120_0011u64;
        for flags in [thread, spawn, fork] {
            assert_eq!(
                run(&watched, arch, clone, flags),
                SECCOMP_RET_ALLOW,
                "{flags:#x}"
            );
        }
        for flags in [
            u64::from(CLONE_VM) | 17,
            u64::from(CLONE_VM | CLONE_VFORK | CLONE_PARENT),
            u64::from(CLONE_VM | CLONE_PARENT),
            u64::from(CLONE_VM | CLONE_VFORK | CLONE_UNTRACED),
            u64::from(CLONE_FS) | 17,
            u64::from(CLONE_VM | CLONE_VFORK | CLONE_FS),
            u64::from(CLONE_NEWUSER) | 17,
        ] {
            assert_eq!(
                run(&watched, arch, clone, flags),
                errno(libc::EPERM),
                "{flags:#x}"
            );
            assert_eq!(
                run(&prog, arch, clone, flags),
                if flags & u64::from(CLONE_UNTRACED | CLONE_NEWUSER) != 0 {
                    errno(libc::EPERM)
                } else {
                    SECCOMP_RET_ALLOW
                },
                "{flags:#x}"
            );
        }
    }

    #[test]
    fn the_notify_filter_hands_over_every_exec_and_only_those() {
        let (Some(prog), Some(abi)) = (notify_program(), NATIVE) else {
            return;
        };
        assert_eq!(run(&prog, abi.arch, abi.execve, 0), SECCOMP_RET_USER_NOTIF);
        assert_eq!(
            run(&prog, abi.arch, abi.execveat, 0),
            SECCOMP_RET_USER_NOTIF
        );
        for nr in [0, abi.clone, abi.socket, abi.prctl, SYS_CLONE3] {
            assert_eq!(run(&prog, abi.arch, nr, 0), SECCOMP_RET_ALLOW, "{nr}");
        }
        let nosys = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        // i386's execve is 11: another ABI fails whatever its number.
        assert_eq!(run(&prog, 0x4000_0003, 11, 0), nosys);
        if let Some(bit) = abi.x32 {
            assert_eq!(run(&prog, abi.arch, bit | abi.execve, 0), nosys);
        }
    }
}
