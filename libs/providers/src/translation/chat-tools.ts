import type { ChatTool, FunctionToolDto, ToolChoice } from '@igw/contracts';

/** A function tool: validation checked every tool whose type is `function` as one. */
export function isFunctionTool(tool: ChatTool): tool is FunctionToolDto {
  return tool.type === 'function';
}

/** The function tools `tool_choice: {type: 'allowed_tools'}` limits the callable set to, if it does. */
export function allowedToolNames(choice: ToolChoice | null | undefined): Set<string> | undefined {
  if (typeof choice !== 'object' || choice === null || choice.type !== 'allowed_tools') return undefined;
  return new Set(choice.allowed_tools.tools.filter(isFunctionTool).map((tool) => tool.function.name));
}
