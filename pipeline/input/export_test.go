package input

import "os"

// SetOpenFile makes the package open files with open until the test ends.
func SetOpenFile(cleanup func(func()), open func(string) (*os.File, error)) {
	openFile = open
	cleanup(func() { openFile = os.Open })
}

// SetPageBudget sets the limits of Parts' budget of decompressed pages
// until the test ends.
func SetPageBudget(cleanup func(func()), turn, shared, ahead int64) {
	old := pageBudget
	pageBudget = [3]int64{turn, shared, ahead}
	cleanup(func() { pageBudget = old })
}
