package askuser

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkspace is wrapped by ResolveWorkspacePath's error when a path
// leads outside the workspace: absolute, through "..", or through a
// symbolic link that points out.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// ResolveWorkspacePath resolves rel inside workspace by the rules of
// directory answers (DESIGN §9 "confined to --workspace like directory
// answers"): rel must be relative (no leading / or \, no volume), free of
// NUL bytes, must not climb out with "..", and once every symbolic link on
// the way is followed (dangling ones included, at most 40) it must still be
// the workspace or below it. A path whose tail does not exist yet is allowed
// when its existing part resolves inside. It returns the absolute resolved
// path. Errors name rel and say why, for a person or a model to read; those
// about leaving the workspace wrap ErrOutsideWorkspace.
func ResolveWorkspacePath(workspace, rel string) (string, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return "", errors.New("no workspace is configured (--workspace)")
	}
	if strings.ContainsRune(rel, 0) {
		return "", errors.New("the path must not contain NUL bytes")
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", outsideError(fmt.Sprintf("%q is absolute, outside the workspace; give a path relative to it", clip(rel)))
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", outsideError(fmt.Sprintf("%q leads outside the workspace", clip(rel)))
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", errors.New("the workspace root cannot be read")
	}
	resolved, _, err := resolvePath(root, clean)
	switch {
	case errors.Is(err, errNotDirectory):
		return "", fmt.Errorf("%q goes through a file, not a directory", clip(rel))
	case errors.Is(err, errSymlinkLoop):
		return "", fmt.Errorf("%q has too many levels of symbolic links", clip(rel))
	case err != nil:
		return "", fmt.Errorf("%q cannot be resolved: %v", clip(rel), unwrapPathError(err))
	}
	if !within(root, resolved) {
		return "", outsideError(fmt.Sprintf("%q resolves outside the workspace through a symbolic link", clip(rel)))
	}
	return resolved, nil
}

// outsideError is an error about leaving the workspace: its text is the
// message alone, and errors.Is matches ErrOutsideWorkspace.
type outsideError string

func (e outsideError) Error() string { return string(e) }

func (e outsideError) Is(target error) bool { return target == ErrOutsideWorkspace }
