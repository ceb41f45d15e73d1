package tools

func (s *Set) editFileTool() *Tool { return pendingTool("edit_file") }
