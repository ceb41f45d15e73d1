package tools

func (s *Set) listDirectoryTool() *Tool { return pendingTool("list_directory") }
