package tools

// Operations of a ChangeRequest made by delete_file, move_file and
// copy_file.
const (
	OpDelete = "delete"
	OpMove   = "move"
	OpCopy   = "copy"
)

// DirectoryDeleted reports a delete_file call that deleted a directory.
type DirectoryDeleted struct {
	Path string
	// Entries is the number of files and directories deleted below Path.
	Entries int
}

// Kind returns "directory_deleted".
func (DirectoryDeleted) Kind() string { return "directory_deleted" }

// FileCopied reports a copy_file call.
type FileCopied struct {
	// From is the file copied; To the new copy.
	From, To string
	// ContentHash is the lowercase hex SHA-256 of the content copied.
	ContentHash string
}

// Kind returns "file_copied".
func (FileCopied) Kind() string { return "file_copied" }
