package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"vigil/internal/atomicfile"
	"vigil/internal/attest"
)

var keygenCmd = &cobra.Command{
	Use:   "keygen NAME",
	Short: "Make an ed25519 key pair for signing archives: NAME.key and NAME.pub",
	Long: `keygen writes a new ed25519 key pair: NAME.key, the private key (PKCS#8 PEM,
mode 0600), for vigil record --sign-key; and NAME.pub, the public key (PKIX
PEM), for vigil verify --pubkey. openssl reads both ("openssl pkey -in
NAME.key -text"). It prints the key id, the securesystemslib key id that
signed archives name.

It never overwrites: if NAME.key or NAME.pub exists, it writes nothing and
exits 125.`,
	Example: `  vigil keygen ci
  vigil record --archive run.tar.gz --sign-key ci.key -- ./agent
  vigil verify --pubkey ci.pub run.tar.gz`,
	Args: cobra.ExactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		privPath, pubPath := args[0]+".key", args[0]+".pub"
		for _, p := range []string{privPath, pubPath} {
			if _, err := os.Lstat(p); err == nil {
				return fmt.Errorf("%s: already exists; keygen does not overwrite keys", p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		priv, pub, id, err := attest.GenerateKey()
		if err != nil {
			return err
		}
		// Create never replaces a file, should one appear meanwhile.
		if err := atomicfile.Create(privPath, priv, 0o600); err != nil {
			return err
		}
		if err := atomicfile.Create(pubPath, pub, 0o644); err != nil {
			os.Remove(privPath)
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s\n", id, privPath, pubPath)
		return nil
	},
}

func init() { rootCmd.AddCommand(keygenCmd) }
