package tools

func (s *Set) createDirectoryTool() *Tool { return pendingTool("create_directory") }
