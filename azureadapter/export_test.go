package azureadapter

// SetListPageSize sets the page size of List and Walk for the tests of
// this package and returns a function that restores it.
func SetListPageSize(n int32) (restore func()) {
	old := listPageSize
	listPageSize = n
	return func() { listPageSize = old }
}
