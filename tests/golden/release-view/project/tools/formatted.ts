// as a formatter writes it: double quotes, semicolons, the schema over several lines
import { z } from "zod";

export default {
  description: "Find orders by customer.",
  parameters: z.toJSONSchema(
    z.object({
      customer: z.string().describe("The customer's id"),
    }),
  ),
  async execute(args: { customer: string }) {
    return `orders of ${args.customer}`;
  },
};
