// Package objstore holds what the object-store adapters (s3adapter,
// gcsadapter, azureadapter) share: how storage paths map to object keys
// below a prefix ([Keys]), which prefixes and keys are valid
// ([CheckPrefix], [Keys.Check]), how a sorted key listing becomes the
// directories and files of a walk or a directory listing ([Keys.Walk],
// [Keys.List]), and how one listing settles what a path is
// ([Keys.Settle]), on which [Stat], [OpenRead] and MkdirAll's
// [MissingDirs] are built. Each adapter keeps its SDK calls: it adapts its
// listing to the small [Lister] interface and gives its conditional GET as
// a [GetFunc].
//
// # Keys and directories
//
// The storage path "a/b.txt" is the key prefix+"a/b.txt", where the
// prefix is "" (the whole bucket) or a canonical storage path with its
// trailing slash, so that the backend of prefix "tenant1" never sees the
// keys of "tenant10". [CheckPrefix] decides which prefixes are valid, for
// an adapter's constructor and its mount spec parser alike.
//
// Object stores have no directories, so they are emulated: a directory
// exists when some key lies below it ("a/" is a prefix of a key) or when
// its marker object "a/" exists. A key that is both an object and a
// prefix ("a" next to "a/b") is a directory: the directory is reported
// and the object cannot be reached.
//
// Keys that other tools wrote and that are not canonical storage paths (a
// leading "/", empty, "." or ".." segments, a NUL or a backslash, a drive
// prefix, a segment starting with "~", or a key past the store's
// [Limits]) are skipped by listings and walks ([Keys.Valid]): they are
// never shown under another name.
package objstore
