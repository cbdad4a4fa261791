package vmtest

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// MirrorEnv overrides the Debian mirror, as a base URL without archive
// folder ("http://host").
const MirrorEnv = "VMTEST_MIRROR"

// AptSourceFiles are the machine's apt sources, read (never written) to
// learn which Debian mirror this machine reaches.
func AptSourceFiles() []string {
	files := []string{"/etc/apt/sources.list"}
	for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	return files
}

// DefaultMirror is the mirror used when $VMTEST_MIRROR is unset and the
// machine's apt sources name no Debian archive, as on an Ubuntu CI
// runner. Debian's CDN serves both archive folders the matrix uses,
// /debian and /debian-security.
const DefaultMirror = "http://deb.debian.org"

// FindMirror returns the Debian mirror to fetch kernels from, and where
// it came from, for the log: $VMTEST_MIRROR if set, else the scheme and
// host of the first Debian archive URI in the given apt source files,
// else DefaultMirror. Reusing the machine's own mirror means the runner
// reaches whatever this machine is allowed to reach.
func FindMirror(files []string) (mirror, source string) {
	if m := os.Getenv(MirrorEnv); m != "" {
		return strings.TrimRight(m, "/"), "$" + MirrorEnv
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, u := range sourceURIs(string(b)) {
			if m, ok := debianMirror(u); ok {
				return m, f
			}
		}
	}
	return DefaultMirror, fmt.Sprintf("the default: no Debian archive in %s; set %s=http://HOST for another",
		strings.Join(files, ", "), MirrorEnv)
}

// sourceURIs lists the URIs of an apt sources file in either format:
// one-line ("deb [options] URI suite component...") or deb822 ("URIs:").
func sourceURIs(text string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if v, ok := strings.CutPrefix(line, "URIs:"); ok {
			out = append(out, strings.Fields(v)...)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "deb" && f[0] != "deb-src") {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			// Options run up to the word that ends with "]".
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) > 0 {
				f = f[1:]
			}
		}
		if len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// debianMirror turns an archive URI such as http://host/debian or
// http://host/debian-security into the mirror base http://host.
func debianMirror(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	switch strings.Trim(u.Path, "/") {
	case "debian", "debian-security":
		return u.Scheme + "://" + u.Host, true
	}
	return "", false
}
