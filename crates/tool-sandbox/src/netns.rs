//! Network namespaces for sandboxes. Where this process may enter a namespace it makes (root,
//! or `CAP_SYS_ADMIN`), each command's fresh one is made ahead on a thread of its own, with its
//! loopback up and the filter's listener open ([`take_prepared`]), and the command's first
//! process joins it before it executes bubblewrap: making one costs about a millisecond, which
//! then is not on the command's path. Elsewhere bubblewrap makes it, and:
//!
//! A listening socket on the loopback of a sandbox's own network namespace, made from outside:
//! the network filter's only door. A short-lived child process joins the sandbox's user (when
//! it has its own) and network namespaces, opens the socket, and passes it back over a socket
//! pair; the filter then accepts on it from the host's side. Nothing runs inside the sandbox
//! for it, and the sandbox's processes can reach nothing else.

use std::net::TcpListener;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::net::UnixStream;

/// The port the filter listens on inside every sandbox.
pub(crate) const PROXY_PORT: u16 = 3128;

fn ns_inode(path: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// Open a listener on `127.0.0.1:port` in the network namespace of `pid`.
#[allow(unsafe_code)]
pub(crate) fn listener_in(pid: libc::pid_t, port: u16) -> Result<TcpListener, String> {
    let open = |what: &str| {
        std::fs::File::open(format!("/proc/{pid}/ns/{what}"))
            .map_err(|e| format!("cannot open the sandbox's {what} namespace: {e}"))
    };
    let net = open("net")?;
    let join_user = ns_inode(&format!("/proc/{pid}/ns/user")) != ns_inode("/proc/self/ns/user");
    if !join_user {
        // Same user namespace (we are privileged in it): a thread can join the network
        // namespace by itself, which is much cheaper than a process.
        return std::thread::scope(|s| {
            s.spawn(|| listener_from_thread(&net, port))
                .join()
                .map_err(|_| "the helper thread panicked".to_owned())?
        });
    }
    let user = Some(open("user")?);
    let (ours, theirs) =
        UnixStream::pair().map_err(|e| format!("cannot make a socket pair: {e}"))?;
    // Everything the child needs is prepared here: after `fork` in a threaded process it may
    // only make system calls.
    let net_fd = net.as_raw_fd();
    let user_fd = user.as_ref().map_or(-1, |f| f.as_raw_fd());
    let send_fd = theirs.as_raw_fd();
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
        },
        sin_zero: [0; 8],
    };
    let mut cmsg_space = [0u64; 8];
    let mut byte = [0u8; 1];
    // SAFETY: fork in a threaded process; the child only makes system calls on descriptors and
    // buffers prepared above (no allocation, no locks) and leaves with _exit.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        // SAFETY: see above; each call's arguments are valid descriptors or local buffers.
        unsafe {
            if user_fd >= 0 && libc::setns(user_fd, libc::CLONE_NEWUSER) != 0 {
                libc::_exit(10);
            }
            if libc::setns(net_fd, libc::CLONE_NEWNET) != 0 {
                libc::_exit(11);
            }
            let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if s < 0 {
                libc::_exit(12);
            }
            let one: libc::c_int = 1;
            libc::setsockopt(
                s,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
            if libc::bind(
                s,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ) != 0
            {
                libc::_exit(13);
            }
            if libc::listen(s, 128) != 0 {
                libc::_exit(14);
            }
            let mut iov = libc::iovec {
                iov_base: byte.as_mut_ptr().cast(),
                iov_len: 1,
            };
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cmsg_space.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>(), s);
            if libc::sendmsg(send_fd, &msg, 0) != 1 {
                libc::_exit(15);
            }
            libc::_exit(0);
        }
    }
    drop(theirs);
    let received = receive_fd(&ours);
    let mut status: libc::c_int = 0;
    // SAFETY: reaps the child forked above.
    unsafe {
        libc::waitpid(child, &mut status, 0);
    }
    let fd = received.map_err(|e| {
        let code = (status >> 8) & 0xff;
        let step = match code {
            10 => "joining the sandbox's user namespace",
            11 => "joining the sandbox's network namespace",
            12 => "opening a socket",
            13 => "binding 127.0.0.1",
            14 => "listening",
            15 => "passing the socket back",
            _ => "the helper process",
        };
        format!("{step} failed ({e})")
    })?;
    Ok(TcpListener::from(fd))
}

/// On a thread of its own (which ends after it): join the network namespace `net`, open the
/// listener there, and give it back. A socket stays in the namespace it was made in.
#[allow(unsafe_code)]
fn listener_from_thread(net: &std::fs::File, port: u16) -> Result<TcpListener, String> {
    // SAFETY: setns on a namespace descriptor we hold; it changes only this thread, which
    // ends when this function returns.
    if unsafe { libc::setns(net.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "joining the sandbox's network namespace failed ({})",
            std::io::Error::last_os_error()
        ));
    }
    let l = bind_loopback(port)?;
    Ok(l)
}

/// A listener on `127.0.0.1:port` in the calling thread's network namespace.
fn bind_loopback(port: u16) -> Result<TcpListener, String> {
    TcpListener::bind(("127.0.0.1", port)).map_err(|e| format!("binding 127.0.0.1:{port}: {e}"))
}

/// Receive one descriptor sent with `SCM_RIGHTS`.
#[allow(unsafe_code)]
fn receive_fd(sock: &UnixStream) -> Result<OwnedFd, String> {
    let mut byte = [0u8; 1];
    let mut cmsg_space = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: recvmsg fills the local buffers described by `msg`; the descriptor it carries,
    // if any, is new to this process and owned here.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg_space.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cmsg_space) as _;
        let n = libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n != 1 {
            return Err("no socket came back".into());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err("the reply carried no socket".into());
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::c_int>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// A network namespace made ahead of a command, with its loopback up and the filter's
/// listener already open in it: the command's own, fresh one, but made off the command's
/// critical path (making one costs about a millisecond).
pub(crate) struct Prepared {
    /// The namespace (its `/proc/thread-self/ns/net`).
    pub(crate) ns: std::fs::File,
    /// A listener on `127.0.0.1:PROXY_PORT` inside it.
    pub(crate) listener: TcpListener,
}

/// The one namespace waiting to be taken, and whether this process can make them at all.
struct Pool {
    slot: std::sync::Mutex<(Option<Prepared>, bool)>,
    cond: std::sync::Condvar,
}

static POOL: std::sync::OnceLock<Option<&'static Pool>> = std::sync::OnceLock::new();

/// Take a prepared namespace, if this process can make them (it may enter a network
/// namespace it makes: root, or `CAP_SYS_ADMIN`); the next one is made in the background.
/// `None`: bubblewrap makes the command's namespace itself, as without a pool.
pub(crate) fn take_prepared() -> Option<Prepared> {
    let pool = (*POOL.get_or_init(start_pool))?;
    let mut guard = pool
        .slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The maker is done with its first one within a millisecond or two; waiting for it is
    // no slower than having bubblewrap make one.
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(50);
    loop {
        if let Some(p) = guard.0.take() {
            pool.cond.notify_all();
            return Some(p);
        }
        if !guard.1 {
            return None;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return None;
        }
        guard = pool
            .cond
            .wait_timeout(guard, left)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
}

/// Make the first namespace on a thread of its own, which then keeps the slot filled; `None`
/// when this process cannot make one.
fn start_pool() -> Option<&'static Pool> {
    let first = std::thread::scope(|s| s.spawn(make).join().ok())?.ok()?;
    let pool: &'static Pool = Box::leak(Box::new(Pool {
        slot: std::sync::Mutex::new((Some(first), true)),
        cond: std::sync::Condvar::new(),
    }));
    let spawned = std::thread::Builder::new()
        .name("toolgate-netns".into())
        .spawn(move || {
            loop {
                {
                    let mut guard = pool
                        .slot
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    while guard.0.is_some() {
                        guard = pool
                            .cond
                            .wait(guard)
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                }
                let made = make();
                let mut guard = pool
                    .slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match made {
                    Ok(p) => guard.0 = Some(p),
                    Err(e) => {
                        tracing::warn!(target: "toolgate::sandbox", error = %e, "cannot make network namespaces ahead any more; bubblewrap makes each");
                        guard.1 = false;
                        pool.cond.notify_all();
                        return;
                    }
                }
                pool.cond.notify_all();
            }
        });
    match spawned {
        Ok(_) => Some(pool),
        Err(_) => None,
    }
}

/// On the calling thread (which stays in it): a new network namespace with its loopback up,
/// and the filter's listener open in it.
#[allow(unsafe_code)]
fn make() -> Result<Prepared, String> {
    // SAFETY: unshare of the network namespace changes only the calling thread.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        ));
    }
    let ns = std::fs::File::open("/proc/thread-self/ns/net")
        .map_err(|e| format!("opening the new network namespace: {e}"))?;
    loopback_up()?;
    let listener = bind_loopback(PROXY_PORT)?;
    Ok(Prepared { ns, listener })
}

/// Bring up `lo` in the calling thread's network namespace.
#[allow(unsafe_code)]
fn loopback_up() -> Result<(), String> {
    // SAFETY: a socket for the ioctl, closed below; the request's buffer is local.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(format!("socket: {}", std::io::Error::last_os_error()));
        }
        let s = OwnedFd::from_raw_fd(s);
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) != 0 {
            return Err(format!(
                "SIOCGIFFLAGS lo: {}",
                std::io::Error::last_os_error()
            ));
        }
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &req) != 0 {
            return Err(format!(
                "SIOCSIFFLAGS lo: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}
