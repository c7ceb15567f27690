package principal_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/principal"
)

func TestDirectory(t *testing.T) {
	t.Parallel()
	d, err := principal.NewDirectory([]principal.Person{
		{ID: "alice", Name: "Alice", Email: "Alice@Example.com", Tokens: []string{"a1", "a2"}},
		{ID: "bob", Name: "Bob", Tokens: []string{"b1"}, Groups: []string{"finance"}},
	})
	require.NoError(t, err)
	require.Equal(t, "alice", d.ByToken("a2").ID)
	require.Equal(t, "bob", d.ByToken("b1").ID)
	require.Nil(t, d.ByToken("a"))
	require.Nil(t, d.ByToken(""))
	require.Equal(t, "alice", d.ByEmail("alice@example.COM").ID)
	require.Nil(t, d.ByEmail("bob@example.com"))
	require.Equal(t, "Bob", d.Get("bob").Name)
	require.Equal(t, []string{"a1", "a2", "b1"}, d.Tokens())
	require.Equal(t, 2, d.Len())

	var none *principal.Directory
	require.Nil(t, none.ByToken("a1"))
	require.Zero(t, none.Len())

	for _, bad := range [][]principal.Person{
		{{ID: "a"}, {ID: "a"}},
		{{ID: "a", Tokens: []string{"t"}}, {ID: "b", Tokens: []string{"t"}}},
		{{ID: "a", Email: "x@y.z"}, {ID: "b", Email: "X@y.z"}},
		{{Name: "no id"}},
	} {
		_, err := principal.NewDirectory(bad)
		require.Error(t, err, bad)
	}
}
