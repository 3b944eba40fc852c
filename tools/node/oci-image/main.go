// Command oci-image writes a single-layer container image as an image archive (the `docker save`
// layout, which `ctr images import` reads) from files on this machine, with go-containerregistry.
// It stands in for a Dockerfile build where no Docker and no registry exist: crane's own
// `append`/`mutate` cannot set an entrypoint without pushing to a registry, the library can.
//
//	oci-image -tag registry.k8s.io/pause:3.10.1 -o pause.tar -file ./pause=/pause -entrypoint /pause
//
// -tree copies a whole directory (regular files, directories and symbolic links, in lexical order)
// and -symlink adds a link, which is what an application image (a runtime, its libraries and an
// application directory) needs.
package main

import (
	"archive/tar"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	var files, trees, links, dirs, env, entrypoint, cmd list
	tag := flag.String("tag", "", "image reference written into the archive (required)")
	out := flag.String("o", "", "output archive path (required)")
	workdir := flag.String("workdir", "", "working directory of the image")
	user := flag.String("user", "", "user (and group) the image runs as, e.g. 65535:65535")
	flag.Var(&files, "file", "SRC=DEST: copy a host file into the layer (repeatable)")
	flag.Var(&trees, "tree", "SRC=DEST: copy a host directory recursively into the layer (repeatable)")
	flag.Var(&links, "symlink", "PATH=TARGET: a symbolic link in the layer (repeatable)")
	flag.Var(&dirs, "dir", "an empty directory in the layer, mode 1777 (repeatable)")
	flag.Var(&env, "env", "KEY=VALUE in the image config (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "one entrypoint argument (repeatable, in order)")
	flag.Var(&cmd, "cmd", "one cmd argument (repeatable, in order)")
	flag.Parse()
	if *tag == "" || *out == "" || len(files)+len(trees) == 0 {
		fmt.Fprintln(os.Stderr, "oci-image: -tag, -o and at least one -file or -tree are required")
		os.Exit(2)
	}
	content := layerContent{files: files, trees: trees, links: links, dirs: dirs}
	if err := run(*tag, *out, *workdir, *user, content, env, entrypoint, cmd); err != nil {
		fmt.Fprintf(os.Stderr, "oci-image: %v\n", err)
		os.Exit(1)
	}
}

// layerContent is what goes into the image's single layer.
type layerContent struct {
	files, trees, links, dirs []string
}

func run(tag, out, workdir, user string, content layerContent, env, entrypoint, cmd []string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	// The layer goes to a file beside the output: an application image is hundreds of MB.
	layerFile, err := os.CreateTemp(filepath.Dir(out), ".layer-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(layerFile.Name())
	if err := writeLayer(layerFile, content); err != nil {
		layerFile.Close()
		return err
	}
	if err := layerFile.Close(); err != nil {
		return err
	}
	l, err := tarball.LayerFromFile(layerFile.Name())
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

// writeLayer writes an uncompressed tar holding each file and tree (with their parent
// directories), each link and each empty directory, owned by root, with fixed timestamps so the
// same inputs give the same digest.
func writeLayer(w io.Writer, content layerContent) error {
	tw := tar.NewWriter(w)
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
	for _, d := range content.dirs {
		if err := addDir(strings.TrimPrefix(path.Clean(d), "/"), 0o1777); err != nil {
			return err
		}
	}
	for _, f := range content.files {
		src, dest, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("-file %q: want SRC=DEST", f)
		}
		dest = strings.TrimPrefix(path.Clean(dest), "/")
		if err := addDir(path.Dir(dest), 0o755); err != nil {
			return err
		}
		if err := addFile(tw, src, dest); err != nil {
			return err
		}
	}
	for _, t := range content.trees {
		src, dest, ok := strings.Cut(t, "=")
		if !ok {
			return fmt.Errorf("-tree %q: want SRC=DEST", t)
		}
		dest = strings.TrimPrefix(path.Clean(dest), "/")
		if err := addDir(dest, 0o755); err != nil {
			return err
		}
		if err := addTree(tw, src, dest, seen); err != nil {
			return err
		}
	}
	for _, l := range content.links {
		at, target, ok := strings.Cut(l, "=")
		if !ok {
			return fmt.Errorf("-symlink %q: want PATH=TARGET", l)
		}
		at = strings.TrimPrefix(path.Clean(at), "/")
		if err := addDir(path.Dir(at), 0o755); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: at, Linkname: target, Mode: 0o777}); err != nil {
			return err
		}
	}
	return tw.Close()
}

// addFile writes one host file (following links) as a regular file with its permission bits.
func addFile(tw *tar.Writer, src, dest string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: dest, Mode: int64(info.Mode().Perm()), Size: info.Size()}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// addTree writes everything below src under dest; links are kept as links.
func addTree(tw *tar.Writer, src, dest string, seen map[string]bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		name := path.Join(dest, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if seen[name] {
				return nil
			}
			seen[name] = true
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(info.Mode().Perm())})
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
		case info.Mode().IsRegular():
			return addFile(tw, p, name)
		}
		return nil // sockets, devices: nothing an image needs
	})
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
