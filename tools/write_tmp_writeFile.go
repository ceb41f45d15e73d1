package tools

func (s *Set) writeFileTool() *Tool { return pendingTool("write_file") }
