package input

import "os"

// SetOpenFile makes the package open files with open until the test ends.
func SetOpenFile(cleanup func(func()), open func(string) (*os.File, error)) {
	openFile = open
	cleanup(func() { openFile = os.Open })
}
