package askuser

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lubanhq/luban/api"
)

// ErrOutsideWorkspace is wrapped by ResolveWorkspacePath's error when a path
// leads outside the workspace: absolute, through "..", or through a
// symbolic link that points out.
var ErrOutsideWorkspace = errors.New("outside the workspace")

// ResolveWorkspacePath resolves rel inside workspace by the rules of
// directory answers (docs/design.md §9 "confined to --workspace like directory
// answers"): rel must be relative (no leading / or \, no volume), free of
// NUL bytes, must not climb out with "..", and once every symbolic link on
// the way is followed (dangling ones included, at most 40) it must still be
// the workspace or below it. A path whose tail does not exist yet is allowed
// when its existing part resolves inside. It returns the absolute resolved
// path. Errors name rel and say why, for a person or a model to read; those
// about leaving the workspace wrap ErrOutsideWorkspace.
func ResolveWorkspacePath(workspace, rel string) (string, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return "", pathError{api.DetailNoWorkspace, "no workspace is configured (--workspace)"}
	}
	if strings.ContainsRune(rel, 0) {
		return "", pathError{api.DetailInvalidPath, "the path must not contain NUL bytes"}
	}
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "" {
		return "", pathError{api.DetailOutsideWorkspace, fmt.Sprintf("%q is absolute, outside the workspace; give a path relative to it", clip(rel))}
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", pathError{api.DetailOutsideWorkspace, fmt.Sprintf("%q leads outside the workspace", clip(rel))}
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", pathError{api.DetailNoWorkspace, "the workspace root cannot be read"}
	}
	resolved, _, err := resolvePath(root, clean)
	switch {
	case errors.Is(err, errNotDirectory):
		return "", pathError{api.DetailNotDirectory, fmt.Sprintf("%q goes through a file, not a directory", clip(rel))}
	case errors.Is(err, errSymlinkLoop):
		return "", pathError{api.DetailInvalidPath, fmt.Sprintf("%q has too many levels of symbolic links", clip(rel))}
	case err != nil:
		return "", pathError{api.DetailInvalidPath, fmt.Sprintf("%q cannot be resolved: %v", clip(rel), unwrapPathError(err))}
	}
	if !within(root, resolved) {
		return "", pathError{api.DetailOutsideWorkspace, fmt.Sprintf("%q resolves outside the workspace through a symbolic link", clip(rel))}
	}
	return resolved, nil
}

// pathError is an error of ResolveWorkspacePath: its text is the message
// alone, code is its FieldCode, and errors.Is matches ErrOutsideWorkspace
// for a path that leaves the workspace.
type pathError struct {
	code api.FieldCode
	msg  string
}

func (e pathError) Error() string { return e.msg }

func (e pathError) Is(target error) bool {
	return target == ErrOutsideWorkspace && e.code == api.DetailOutsideWorkspace
}

// PathErrorCode is the FieldCode of an error of ResolveWorkspacePath:
// outside_workspace, no_workspace, not_directory or invalid_path (also for
// any other error).
func PathErrorCode(err error) api.FieldCode {
	var pe pathError
	if errors.As(err, &pe) {
		return pe.code
	}
	return api.DetailInvalidPath
}
