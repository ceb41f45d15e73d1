// Package testserver runs small in-process servers for tests: an SSH
// server with the SFTP subsystem (StartSFTP) and a read-only in-memory S3
// server (S3, StartS3). Each listens on 127.0.0.1 and stops when its test
// ends, so tests of the remote backends need no container for the cases
// a real server cannot be made to produce.
package testserver
