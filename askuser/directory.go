package askuser

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lubanhq/luban/api"
)

// maxSymlinks bounds the symbolic links followed while resolving one answer,
// like the kernel's ELOOP limit.
const maxSymlinks = 40

// checkDirectory validates a directory answer (issue 2 §3, docs/design.md §A.3
// "directory: 目录相对路径"): input must be a relative path that stays inside
// workspace after cleaning and after resolving every symbolic link on the way,
// dangling links included. A path whose tail does not exist yet is allowed
// when its existing part resolves inside. No name on the path may be blank
// (see isBlank): "   /" is not a directory a person meant. It returns the cleaned relative path
// with forward slashes ("." for the root) or the problem.
func checkDirectory(workspace, input string) (string, *problem) {
	path := map[string]any{"path": clip(input)}
	if workspace == "" {
		return "", newProblem(api.DetailNoWorkspace, nil, "directory answers are disabled: the server has no workspace root configured (--workspace)")
	}
	if isBlank(input) {
		return "", newProblem(api.DetailRequired, nil, `enter a directory path relative to the workspace ("." for the workspace itself)`)
	}
	if strings.ContainsRune(input, 0) {
		return "", newProblem(api.DetailInvalidPath, path, "the path must not contain NUL bytes")
	}
	if filepath.IsAbs(input) || strings.HasPrefix(input, "/") || strings.HasPrefix(input, `\`) || filepath.VolumeName(input) != "" {
		return "", newProblem(api.DetailOutsideWorkspace, path, "%q is absolute; enter a path relative to the workspace", clip(input))
	}
	clean := filepath.Clean(filepath.FromSlash(input))
	for _, name := range splitPath(clean) {
		if isBlank(name) {
			return "", newProblem(api.DetailInvalidPath, path, "%q has a name made only of spaces or invisible characters", clip(input))
		}
	}
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", newProblem(api.DetailOutsideWorkspace, path, "%q leads outside the workspace", clip(input))
	}
	if !filepath.IsAbs(workspace) {
		return "", newProblem(api.DetailNoWorkspace, nil, "the server's workspace root is not an absolute path")
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", newProblem(api.DetailNoWorkspace, nil, "the server's workspace root cannot be read")
	}
	resolved, isDir, err := resolvePath(root, clean)
	switch {
	case errors.Is(err, errNotDirectory):
		return "", newProblem(api.DetailNotDirectory, path, "%q goes through a file, not a directory", clip(input))
	case errors.Is(err, errSymlinkLoop):
		return "", newProblem(api.DetailInvalidPath, path, "%q has too many levels of symbolic links", clip(input))
	case err != nil:
		return "", newProblem(api.DetailInvalidPath, path, "%q cannot be checked: %v", clip(input), unwrapPathError(err))
	}
	if !within(root, resolved) {
		return "", newProblem(api.DetailOutsideWorkspace, path, "%q resolves outside the workspace through a symbolic link", clip(input))
	}
	if !isDir {
		return "", newProblem(api.DetailNotDirectory, path, "%q is a file, not a directory", clip(input))
	}
	return filepath.ToSlash(clean), nil
}

var (
	errNotDirectory = errors.New("not a directory")
	errSymlinkLoop  = errors.New("too many symbolic links")
)

// resolvePath resolves rel below root the way the kernel would, one
// component at a time, following every symbolic link (including dangling
// ones, whose target is resolved as far as it exists). Once a component does
// not exist, the rest is joined lexically. isDir is true when the result is
// an existing directory or does not exist yet.
func resolvePath(root, rel string) (resolved string, isDir bool, err error) {
	pending := splitPath(rel)
	cur := root
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, pending...)...), true, nil
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return "", false, errNotDirectory
		}
		if err != nil {
			return "", false, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > maxSymlinks {
				return "", false, errSymlinkLoop
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", false, err
			}
			if filepath.IsAbs(target) {
				vol := filepath.VolumeName(target)
				cur = vol + string(filepath.Separator)
				target = target[len(vol):]
			}
			pending = append(splitPath(target), pending...)
			continue
		}
		cur = next
		if !fi.IsDir() {
			if hasNamedComponent(pending) {
				return "", false, errNotDirectory
			}
			return cur, false, nil
		}
	}
	return cur, true, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// hasNamedComponent reports whether any component would descend further.
func hasNamedComponent(cs []string) bool {
	for _, c := range cs {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

// within reports whether p is root or below it. The separator check defeats
// the sibling-prefix trick (/work/ws-evil is not inside /work/ws).
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
