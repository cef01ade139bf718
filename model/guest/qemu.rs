//! One boot: a kernel under qemu with the probe's initramfs, at a number
//! of vCPUs, its serial console captured, within a time limit.
//!
//! KVM is tried first where `/dev/kvm` opens (`--accel auto`), once per
//! process: on some hosts it opens but cannot run a guest (qemu aborts
//! setting an MSR, or reports "KVM internal error" and stops the guest,
//! which would then sit until the time limit), so a KVM boot that fails
//! before the probe says hello is retried under TCG, and TCG is used for
//! the rest of the run. TCG (multi-threaded) is what the timings in the
//! docs are for.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The emulator.
pub const QEMU: &str = "qemu-system-x86_64";
/// What the probe prints first, once the kernel has run it.
const HELLO: &str = "FCP {\"hello\"";
/// What qemu prints when KVM cannot run the guest.
const KVM_DEAD: &str = "KVM internal error";

/// How the guest's CPUs are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    /// KVM if it works here, else TCG.
    Auto,
    /// qemu's emulator, multi-threaded.
    Tcg,
    /// Hardware virtualisation.
    Kvm,
}

impl Accel {
    /// Parse `auto`, `tcg` or `kvm`.
    pub fn parse(s: &str) -> Result<Accel, String> {
        match s {
            "auto" => Ok(Accel::Auto),
            "tcg" => Ok(Accel::Tcg),
            "kvm" => Ok(Accel::Kvm),
            _ => Err(format!(
                "unknown accelerator {s:?}: expected one of auto, tcg, kvm"
            )),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Auto => "auto",
            Accel::Tcg => "tcg",
            Accel::Kvm => "kvm",
        }
    }
}

/// What `--accel auto` settled on in this process, once a KVM boot showed
/// whether KVM works.
static DECIDED: Mutex<Option<Accel>> = Mutex::new(None);

/// One boot to make.
#[derive(Clone, Debug)]
pub struct Boot {
    /// The kernel image.
    pub vmlinuz: PathBuf,
    /// The initramfs (an uncompressed newc archive).
    pub initrd: PathBuf,
    /// vCPUs.
    pub cpus: usize,
    /// Guest memory in MiB (512: under it, the kernel turns THP off).
    pub memory_mib: usize,
    /// The accelerator asked for.
    pub accel: Accel,
    /// Kill qemu after this long.
    pub timeout: Duration,
    /// Parameters for the probe on the kernel command line
    /// (`fcp.k1=11`: run the reproducer with `-k 11`).
    pub params: Vec<String>,
}

/// What a boot printed.
#[derive(Clone, Debug)]
pub struct Booted {
    /// The serial console (qemu's stdout), and qemu's own messages after
    /// it.
    pub console: String,
    /// The accelerator the boot ran under.
    pub accel: Accel,
    /// Wall time of the boot (both tries, if KVM was tried first).
    pub elapsed: Duration,
    /// Whether it was killed at the time limit.
    pub timed_out: bool,
    /// Why `--accel auto` fell back to TCG, if it did on this boot.
    pub fell_back: Option<String>,
}

/// Whether qemu can be run; an error naming the package if not.
pub fn check_installed() -> Result<String, String> {
    match Command::new(QEMU)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or(QEMU)
            .to_string()),
        Ok(o) => Err(format!("`{QEMU} --version` failed ({})", o.status)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{QEMU} not found: install it (`apt-get install qemu-system-x86`)"
        )),
        Err(e) => Err(format!("cannot run {QEMU}: {e}")),
    }
}

/// Whether `/dev/kvm` opens for reading and writing.
pub fn kvm_opens() -> bool {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok()
}

/// Boot `b` and capture its console. With [`Accel::Auto`], the first boot
/// of the process tries KVM (if `/dev/kvm` opens) and decides for the rest;
/// boots that start meanwhile (`--jobs`) wait for that decision.
pub fn boot(b: &Boot) -> Result<Booted, String> {
    let accel = match b.accel {
        Accel::Auto => {
            let mut decided = DECIDED.lock().unwrap_or_else(|e| e.into_inner());
            match *decided {
                Some(a) => a,
                None if !kvm_opens() => {
                    *decided = Some(Accel::Tcg);
                    Accel::Tcg
                }
                None => {
                    // This boot decides, holding the lock.
                    let first = run(b, Accel::Kvm)?;
                    if first.console.contains(HELLO) && !first.console.contains(KVM_DEAD) {
                        *decided = Some(Accel::Kvm);
                        return Ok(first);
                    }
                    *decided = Some(Accel::Tcg);
                    drop(decided);
                    let why = first
                        .console
                        .lines()
                        .rev()
                        .find(|l| l.contains(QEMU) || l.contains(KVM_DEAD))
                        .unwrap_or("no probe output")
                        .trim()
                        .to_string();
                    let mut second = run(b, Accel::Tcg)?;
                    second.fell_back = Some(why);
                    second.elapsed += first.elapsed;
                    return Ok(second);
                }
            }
        }
        a => a,
    };
    run(b, accel)
}

/// The qemu command line of `b` under `accel`.
pub fn command(b: &Boot, accel: Accel) -> Command {
    let mut cmd = Command::new(QEMU);
    match accel {
        Accel::Kvm => cmd.args(["-accel", "kvm", "-cpu", "host"]),
        _ => cmd.args(["-accel", "tcg,thread=multi", "-cpu", "max"]),
    };
    cmd.arg("-m")
        .arg(b.memory_mib.to_string())
        .arg("-smp")
        .arg(b.cpus.to_string())
        .arg("-kernel")
        .arg(&b.vmlinuz)
        .arg("-initrd")
        .arg(&b.initrd)
        .arg("-append")
        .arg(
            std::iter::once("console=ttyS0 panic=-1 quiet no_timer_check")
                .chain(b.params.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        )
        .args(["-nographic", "-no-reboot"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Copy `from` into `to` until it closes.
fn drain(
    mut from: impl Read + Send + 'static,
    to: Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            to.lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(&buf[..n]);
        }
    })
}

/// One qemu process: run it to its end, its time limit, or (under KVM) the
/// first sign that KVM cannot run the guest.
fn run(b: &Boot, accel: Accel) -> Result<Booted, String> {
    for (what, p) in [("kernel", &b.vmlinuz), ("initramfs", &b.initrd)] {
        if !Path::new(p).is_file() {
            return Err(format!("no {what} at {}", p.display()));
        }
    }
    let t0 = Instant::now();
    let mut child = command(b, accel)
        .spawn()
        .map_err(|e| format!("cannot run {QEMU}: {e}"))?;
    let out = Arc::new(Mutex::new(Vec::new()));
    let err = Arc::new(Mutex::new(Vec::new()));
    let readers = [
        drain(child.stdout.take().expect("piped"), out.clone()),
        drain(child.stderr.take().expect("piped"), err.clone()),
    ];
    let mut timed_out = false;
    loop {
        if child
            .try_wait()
            .map_err(|e| format!("{QEMU}: {e}"))?
            .is_some()
        {
            break;
        }
        let dead = accel == Accel::Kvm && {
            let o = out.lock().unwrap_or_else(|e| e.into_inner());
            let e = err.lock().unwrap_or_else(|e| e.into_inner());
            contains(&o, KVM_DEAD) || contains(&e, KVM_DEAD)
        };
        timed_out = t0.elapsed() >= b.timeout;
        if dead || timed_out {
            let _ = child.kill();
            let _ = child.wait();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let elapsed = t0.elapsed();
    for r in readers {
        let _ = r.join();
    }
    let take = |v: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8_lossy(&v.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    };
    let mut console = take(&out);
    let qemu_said = take(&err);
    if !qemu_said.trim().is_empty() {
        if !console.ends_with('\n') && !console.is_empty() {
            console.push('\n');
        }
        for l in qemu_said.lines() {
            let l = l.trim_end();
            if l.starts_with(QEMU) {
                console.push_str(&format!("{l}\n"));
            } else {
                console.push_str(&format!("{QEMU}: {l}\n"));
            }
        }
    }
    if timed_out {
        console.push_str(&format!(
            "flushcheck: killed {QEMU} after the time limit of {} s\n",
            b.timeout.as_secs()
        ));
    }
    Ok(Booted {
        console,
        accel,
        elapsed,
        timed_out,
        fell_back: None,
    })
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}
