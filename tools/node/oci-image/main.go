// Command oci-image writes a single-layer container image as an image archive (the `docker save`
// layout, which `ctr images import` reads) from files on this machine, with go-containerregistry.
// It stands in for a Dockerfile build where no Docker and no registry exist: crane's own
// `append`/`mutate` cannot set an entrypoint without pushing to a registry, the library can.
//
//	oci-image -tag registry.k8s.io/pause:3.10.1 -o pause.tar -file ./pause=/pause -entrypoint /pause
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var files, dirs, env, entrypoint, cmd list
	tag := flag.String("tag", "", "image reference written into the archive (required)")
	out := flag.String("o", "", "output archive path (required)")
	workdir := flag.String("workdir", "", "working directory of the image")
	user := flag.String("user", "", "user (and group) the image runs as, e.g. 65535:65535")
	flag.Var(&files, "file", "SRC=DEST: copy a host file into the layer (repeatable)")
	flag.Var(&dirs, "dir", "an empty directory in the layer, mode 1777 (repeatable)")
	flag.Var(&env, "env", "KEY=VALUE in the image config (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "one entrypoint argument (repeatable, in order)")
	flag.Var(&cmd, "cmd", "one cmd argument (repeatable, in order)")
	flag.Parse()
	if *tag == "" || *out == "" || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "oci-image: -tag, -o and at least one -file are required")
		os.Exit(2)
	}
	if err := run(*tag, *out, *workdir, *user, files, dirs, env, entrypoint, cmd); err != nil {
		fmt.Fprintf(os.Stderr, "oci-image: %v\n", err)
		os.Exit(1)
	}
}

func run(tag, out, workdir, user string, files, dirs, env, entrypoint, cmd []string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	layerTar, err := layer(files, dirs)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	// containerd imports only the images of this machine's platform.
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config = v1.Config{Env: env, Entrypoint: entrypoint, Cmd: cmd, WorkingDir: workdir, User: user}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}

// layer builds an uncompressed tar holding each file (with its parent directories) and each
// empty directory, owned by root, with fixed timestamps so the same inputs give the same digest.
func layer(files, dirs []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	addDir := func(p string, mode int64) error {
		for _, d := range parents(p) {
			if seen[d] {
				continue
			}
			seen[d] = true
			m := int64(0o755)
			if d == p {
				m = mode
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: m}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range dirs {
		if err := addDir(strings.TrimPrefix(path.Clean(d), "/"), 0o1777); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		src, dest, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("-file %q: want SRC=DEST", f)
		}
		dest = strings.TrimPrefix(path.Clean(dest), "/")
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(src)
		if err != nil {
			return nil, err
		}
		if err := addDir(path.Dir(dest), 0o755); err != nil {
			return nil, err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: dest, Mode: int64(info.Mode().Perm()), Size: int64(len(data))}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// parents returns "a", "a/b", "a/b/c" for "a/b/c" ("." gives none).
func parents(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	var out []string
	parts := strings.Split(p, "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/"))
	}
	return out
}
