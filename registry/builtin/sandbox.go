package builtin

import (
	"os"
	"os/exec"
)

// FindSandbox returns the path of bubblewrap (bwrap), which confines
// bash commands, or "" when it is not installed (Debian: bubblewrap).
func FindSandbox() string {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return ""
	}
	return p
}

// sandboxArgs are bwrap's arguments to run argv confined to root: the
// workspace is the only host folder mounted writable, at its own path;
// the system's programs (/usr and the /bin, /lib links into it) are
// read-only; /tmp is private and empty; there is no /etc but for
// /etc/alternatives and the loader's cache, no home, no other process
// and no network (every namespace unshared, so not even the host's
// loopback).
func sandboxArgs(root string, argv []string) []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
		"--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "--setenv", "HOME", root, "--setenv", "LANG", "C.UTF-8",
		"--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"}
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64"} {
		if target, err := os.Readlink(d); err == nil {
			args = append(args, "--symlink", target, d)
		} else if st, err := os.Stat(d); err == nil && st.IsDir() {
			args = append(args, "--ro-bind", d, d)
		}
	}
	args = append(args, "--ro-bind-try", "/etc/alternatives", "/etc/alternatives",
		"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--bind", root, root, "--chdir", root, "--")
	return append(args, argv...)
}
