export { default } from "../../../tools/lookup_order.ts"; // expect: tools/opencode-shadow shadows the `lookup_order` tool
