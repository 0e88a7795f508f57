package realcmd

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// RootArgs passes on the root's flags the user set, and only those: not
// the command's own, and not the root's left at their defaults.
func TestRootArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"child", "--own", "x"}, nil},
		{[]string{"--huge-pages", "on", "child"}, []string{"--huge-pages=on"}},
		{[]string{"child", "--huge-pages=off", "--cpuprofile", "p", "--own", "y"}, []string{"--cpuprofile=p", "--huge-pages=off"}},
	} {
		var got []string
		root := &cobra.Command{Use: "root"}
		root.PersistentFlags().String("huge-pages", "auto", "")
		root.PersistentFlags().String("cpuprofile", "", "")
		child := &cobra.Command{Use: "child", RunE: func(cmd *cobra.Command, _ []string) error {
			got = RootArgs(cmd)
			return nil
		}}
		child.Flags().String("own", "", "")
		root.AddCommand(child)
		root.SetArgs(tc.args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
